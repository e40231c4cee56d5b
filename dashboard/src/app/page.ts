import type { ComponentType } from "react";

export type ConsolePage = {
  /** Path under /admin/, without a leading slash: "audit-logs". */
  path: string;
  /** Navigation label and document title. */
  title: string;
  /** Roles that see the page; the API refuses the others anyway. */
  roles: Array<"admin" | "auditor">;
  component: ComponentType;
  /** "account": a page about the viewer's own account, linked beside their name rather than in the navigation. */
  placement?: "account";
  /** Rendered on every page while signed in (the page's live notices, e.g. alert toasts). */
  background?: ComponentType;
};
