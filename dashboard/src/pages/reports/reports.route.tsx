import type { ConsolePage } from "../../app/page";
import { ReportsPage } from "./ReportsPage";

export const reportsPage: ConsolePage = { path: "reports", title: "Reports", roles: ["admin", "auditor"], component: ReportsPage };
