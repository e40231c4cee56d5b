import { Navigate, type RouteObject } from "react-router";
import { SignInPage } from "../pages/sign-in/SignInPage";
import { Layout, NotFound } from "./Layout";
import { PAGES } from "./navigation";

export const routes: RouteObject[] = [
  { path: "/sign-in", element: <SignInPage /> },
  {
    path: "/",
    element: <Layout />,
    children: [
      { index: true, element: <Navigate to="/audit-logs" replace /> },
      ...PAGES.map((page) => ({ path: `/${page.path}`, element: <page.component /> })),
      { path: "*", element: <NotFound /> },
    ],
  },
];
