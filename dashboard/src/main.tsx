import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { createBrowserRouter, RouterProvider } from "react-router";
import { Provider } from "urql";
import { createConsoleClient } from "./app/client";
import { routes } from "./app/routes";
import { LiveConnectionProvider } from "./app/live-connection";
import { SessionProvider } from "./app/session";
import "./app/styles.css";

const connection = createConsoleClient();
const router = createBrowserRouter(routes, { basename: "/admin" });

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Provider value={connection.client}>
      <LiveConnectionProvider value={connection}>
        <SessionProvider>
          <RouterProvider router={router} />
        </SessionProvider>
      </LiveConnectionProvider>
    </Provider>
  </StrictMode>,
);
