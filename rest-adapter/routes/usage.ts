import type { RestRoute } from "./route";

/** The caller's API usage. */
export const usageRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/usage",
    operation: "getUsage",
    summary: "The credential making the request and its rate-limit state (this request counted)",
    tag: "Usage",
    resultPath: ["usage"],
    status: 200,
  },
];
