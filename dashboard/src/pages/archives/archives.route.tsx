import type { ConsolePage } from "../../app/page";
import { ArchivesPage } from "./ArchivesPage";

export const archivesPage: ConsolePage = {
  path: "archives",
  title: "Retention & archives",
  roles: ["admin", "auditor"],
  component: ArchivesPage,
};
