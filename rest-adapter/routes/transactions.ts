import type { RestRoute } from "./route";

/** Transactions. */
export const transactionRoutes: RestRoute[] = [
  {
    method: "GET",
    path: "/transactions",
    operation: "listTransactions",
    summary: "List transactions, newest first, with filters",
    tag: "Transactions",
    resultPath: ["transactions"],
    status: 200,
  },
  {
    method: "POST",
    path: "/transactions",
    operation: "createTransaction",
    summary: "Create a transaction (201), or return the one already imported under the same external_id (200)",
    tag: "Transactions",
    bodyKey: "transaction",
    resultPath: ["createTransaction", "transaction"],
    status: 201,
    alternateStatus: {
      status: 200,
      when: ["createTransaction", "created"],
      equals: false,
      description: "Existing transaction with the same external_id and source",
    },
  },
  {
    method: "GET",
    path: "/transactions/{id}",
    operation: "getTransaction",
    summary: "Retrieve a transaction",
    tag: "Transactions",
    resultPath: ["transaction"],
    status: 200,
  },
  {
    method: "PATCH",
    path: "/transactions/{id}",
    operation: "updateTransaction",
    summary: "Update any subset of a transaction's fields",
    tag: "Transactions",
    bodyKey: "transaction",
    resultPath: ["updateTransaction"],
    status: 200,
  },
  {
    method: "DELETE",
    path: "/transactions/{id}",
    operation: "deleteTransaction",
    summary: "Delete a transaction",
    tag: "Transactions",
    message: "Transaction deleted successfully",
    status: 200,
  },
];
