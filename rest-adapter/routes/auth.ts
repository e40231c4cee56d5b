import type { RestRoute } from "./route";

/** Authentication. */
export const authRoutes: RestRoute[] = [
  {
    method: "PATCH",
    path: "/auth/enable_ai",
    operation: "enableAi",
    summary:
      "Turn the AI assistant on for yourself ({user} as upstream); sign-in is POST /auth/login and /auth/refresh, served beside these routes",
    tag: "Auth",
    resultPath: [],
    status: 200,
  },
];
