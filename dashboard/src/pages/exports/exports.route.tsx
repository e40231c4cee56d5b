import type { ConsolePage } from "../../app/page";
import { ExportsPage } from "./ExportsPage";

export const exportsPage: ConsolePage = { path: "exports", title: "Exports", roles: ["admin", "auditor"], component: ExportsPage };
