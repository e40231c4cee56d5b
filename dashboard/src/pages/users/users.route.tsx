import type { ConsolePage } from "../../app/page";
import { UsersPage } from "./UsersPage";

export const usersPage: ConsolePage = { path: "users", title: "Users", roles: ["admin"], component: UsersPage };
