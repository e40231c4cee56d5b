import type { JobHandlers } from "./job-handlers";

/** Housekeeping that no request should wait for. */
export const maintenanceHandlers: JobHandlers = {
  "prune-api-keys": async (_job, { services }) => ({ deleted: await services.apiKeys.pruneRetired() }),
  "ensure-audit-partitions": async (_job, { services }) => services.audit.ensurePartitions(),
  "chain-audit-events": async (_job, { services }) => ({ linked: await services.audit.chainCommitted() }),
  "run-audit-retention": async (_job, { services }) =>
    (await services.retention.run()) ?? { skipped: "another retention run holds the lock" },
  "prune-stream-deliveries": async (_job, { services }) => ({ deleted: await services.streamDestinations.pruneDeliveries() }),
  "prune-alert-windows": async (_job, { services }) => ({ deleted: await services.alerts.pruneWindows() }),
  // Abandoned SSO authorization requests go with expired sessions: both are sign-in state past its lifetime.
  "sweep-expired-sessions": async (_job, { services }) => ({
    expired: await services.sessions.sweepExpired(),
    abandonedSsoRequests: await services.ssoLogins.sweepExpiredRequests(),
    expiredMobileSsoCodes: await services.ssoLogins.sweepExpiredMobileCodes(),
  }),
};
