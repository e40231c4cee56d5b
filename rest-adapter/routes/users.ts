import type { RestRoute } from "./route";

/**
 * A user's own reset and deletion, as upstream routes them (sure-cli's `users reset`, `users reset
 * status`, `users delete-me`). The DELETE is the confirmation: the operations pass `confirm: true`.
 */
export const userRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/users/reset/status",
    operation: "getFamilyResetStatus",
    summary: "How much financial data your family holds, under upstream's count keys (administrators)",
    tag: "Users",
    resultPath: ["familyResetStatus"],
    status: 200,
  },
  {
    method: "DELETE",
    path: "/users/reset",
    operation: "resetFamilyData",
    summary: "Delete your family's financial data at once; users and the audit log stay (administrators, family.reset)",
    tag: "Users",
    resultPath: ["resetFamilyData"],
    status: 200,
  },
  {
    method: "DELETE",
    path: "/users/me",
    operation: "deleteMyAccount",
    summary: "Delete your own account under the user deletion policy; the last active administrator is refused (user.deleted)",
    tag: "Users",
    message: "Account has been deleted",
    status: 200,
  },
];
