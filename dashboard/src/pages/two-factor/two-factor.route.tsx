import type { ConsolePage } from "../../app/page";
import { TwoFactorPage } from "./TwoFactorPage";

/** Everyone who opens the console sets up their own second factor here. */
export const twoFactorPage: ConsolePage = {
  path: "two-factor",
  title: "Two-factor sign-in",
  roles: ["admin", "auditor"],
  placement: "account",
  component: TwoFactorPage,
};
