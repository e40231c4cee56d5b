import type { JobHandlers } from "./worker-host";

/** Housekeeping that no request should wait for. */
export const maintenanceHandlers: JobHandlers = {
  "prune-api-keys": async (_job, { services }) => ({ deleted: await services.apiKeys.pruneRetired() }),
  "ensure-audit-partitions": async (_job, { services }) => services.audit.ensurePartitions(),
  "chain-audit-events": async (_job, { services }) => ({ linked: await services.audit.chainCommitted() }),
  "sweep-expired-sessions": async (_job, { services }) => ({ expired: await services.sessions.sweepExpired() }),
};
