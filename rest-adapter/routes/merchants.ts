import type { RestRoute } from "./route";

/** Merchants. */
export const merchantRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/merchants",
    operation: "listMerchants",
    summary: "List the family's merchants ordered by name",
    tag: "Merchants",
    resultPath: ["merchants"],
    status: 200,
  },
  {
    method: "POST",
    path: "/merchants",
    operation: "createMerchant",
    summary: "Create a merchant (names are unique per family)",
    tag: "Merchants",
    bodyKey: "merchant",
    resultPath: ["createMerchant"],
    status: 201,
  },
  {
    method: "GET",
    path: "/merchants/{id}",
    operation: "getMerchant",
    summary: "Retrieve a merchant",
    tag: "Merchants",
    resultPath: ["merchant"],
    status: 200,
  },
  {
    method: "PATCH",
    path: "/merchants/{id}",
    operation: "updateMerchant",
    summary: "Update a merchant",
    tag: "Merchants",
    bodyKey: "merchant",
    resultPath: ["updateMerchant"],
    status: 200,
  },
  {
    method: "DELETE",
    path: "/merchants/{id}",
    operation: "deleteMerchant",
    summary: "Delete a merchant; its transactions keep existing without one",
    tag: "Merchants",
    message: "Merchant deleted successfully",
    status: 200,
  },
];
