import type { JobHandlers } from "./worker-host";

/** Housekeeping that no request should wait for. */
export const maintenanceHandlers: JobHandlers = {
  "prune-api-keys": async (_job, { services }) => ({ deleted: await services.apiKeys.pruneRetired() }),
};
