import type { ConsolePage } from "../../app/page";
import { StreamingPage } from "./StreamingPage";

export const streamingPage: ConsolePage = {
  path: "streaming",
  title: "Audit streaming",
  roles: ["admin", "auditor"],
  component: StreamingPage,
};
