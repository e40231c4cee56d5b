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
  // Abandoned SSO authorization requests and expired API keys go with expired sessions: all are sign-in
  // state past its lifetime (the keys' expiry is recorded as an audit event).
  "sweep-expired-sessions": async (_job, { services }) => ({
    expired: await services.sessions.sweepExpired(),
    expiredApiKeys: await services.apiKeys.sweepExpired(),
    abandonedSsoRequests: await services.ssoLogins.sweepExpiredRequests(),
    expiredMobileSsoCodes: await services.ssoLogins.sweepExpiredMobileCodes(),
  }),
};
