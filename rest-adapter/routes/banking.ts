import type { RestRoute } from "./route";

/** Bank connections and their syncs. */
export const bankingRoutes: RestRoute[] = [
  {
    method: "POST",
    path: "/sync",
    operation: "syncAll",
    summary: "Sync every bank connection of the family that can sync (202); a sync already under way is returned, not doubled",
    tag: "Syncs",
    resultPath: ["syncAllBankConnections"],
    status: 202,
  },
  {
    method: "GET",
    path: "/syncs",
    operation: "listSyncs",
    summary: "The family's bank syncs, newest first ({data, meta} as upstream)",
    tag: "Syncs",
    resultPath: ["bankSyncRuns"],
    status: 200,
  },
  {
    method: "GET",
    path: "/syncs/latest",
    operation: "getLatestSync",
    summary: "The family's newest sync ({data: null} before the first)",
    tag: "Syncs",
    resultPath: [],
    status: 200,
  },
  {
    method: "GET",
    path: "/syncs/{id}",
    operation: "getSync",
    summary: "Retrieve a sync",
    tag: "Syncs",
    resultPath: [],
    status: 200,
  },
  {
    method: "GET",
    path: "/provider_connections",
    operation: "listProviderConnections",
    summary: "The family's bank-provider connections with their account counts and latest sync",
    tag: "Syncs",
    resultPath: [],
    status: 200,
  },
];
