import type { ConsolePage } from "../../app/page";
import { SsoProvidersPage } from "./SsoProvidersPage";

export const ssoProvidersPage: ConsolePage = {
  path: "sso-providers",
  title: "SSO providers",
  roles: ["admin"],
  component: SsoProvidersPage,
};
