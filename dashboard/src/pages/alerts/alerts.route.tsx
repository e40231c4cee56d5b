import type { ConsolePage } from "../../app/page";
import { AlertsPage } from "./AlertsPage";
import { AlertToasts } from "./AlertToasts";

export const alertsPage: ConsolePage = {
  path: "alerts",
  title: "Alerts",
  roles: ["admin"],
  component: AlertsPage,
  background: AlertToasts,
};
