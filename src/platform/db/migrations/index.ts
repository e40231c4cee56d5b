import type { MigrationContext } from "./context";
import * as foundation from "./0001-foundation";
import * as chats from "./0002-chats";
import * as audit from "./0003-audit";
import * as banking from "./0004-banking";
import * as bankAccountLinks from "./0005-bank-account-links";
import * as sso from "./0006-sso";
import * as auditChainSequencer from "./0007-audit-chain-sequencer";
import * as auditExports from "./0008-audit-exports";
import * as auditStreaming from "./0009-audit-streaming";
import * as alerts from "./0010-alerts";
import * as auditRetention from "./0011-audit-retention";
import * as auditHistogramIndex from "./0012-audit-histogram-index";
import * as rateLimits from "./0013-rate-limits";
import * as userSignIn from "./0014-user-sign-in";
import * as ledger from "./0015-ledger";
import * as ledgerDays from "./0016-ledger-days";
import * as auditChainPartitions from "./0017-audit-chain-partitions";
import * as mobileSignIn from "./0018-mobile-sign-in";
import * as planning from "./0019-planning";
import * as apiKeyExpiry from "./0020-api-key-expiry";
import * as exchangeRates from "./0021-exchange-rates";
import * as investments from "./0022-investments";
import * as imports from "./0027-imports";
import * as positions from "./0028-positions";
import * as partitionLockOrder from "./0023-partition-lock-order";
import * as ledgerMonths from "./0024-ledger-months";
import * as exportRequesterSession from "./0025-export-requester-session";

export type Migration = { name: string; up: (context: MigrationContext) => Promise<void> };

/** Every migration, in order. Listed explicitly so they run the same from src/ (tests) and dist/. */
export const migrations: Migration[] = [
  { name: "0001-foundation", up: foundation.up },
  { name: "0002-chats", up: chats.up },
  { name: "0003-audit", up: audit.up },
  { name: "0004-banking", up: banking.up },
  { name: "0005-bank-account-links", up: bankAccountLinks.up },
  { name: "0006-sso", up: sso.up },
  { name: "0007-audit-chain-sequencer", up: auditChainSequencer.up },
  { name: "0008-audit-exports", up: auditExports.up },
  { name: "0009-audit-streaming", up: auditStreaming.up },
  { name: "0010-alerts", up: alerts.up },
  { name: "0011-audit-retention", up: auditRetention.up },
  { name: "0012-audit-histogram-index", up: auditHistogramIndex.up },
  { name: "0013-rate-limits", up: rateLimits.up },
  { name: "0014-user-sign-in", up: userSignIn.up },
  { name: "0015-ledger", up: ledger.up },
  { name: "0016-ledger-days", up: ledgerDays.up },
  { name: "0017-audit-chain-partitions", up: auditChainPartitions.up },
  { name: "0018-mobile-sign-in", up: mobileSignIn.up },
  { name: "0019-planning", up: planning.up },
  { name: "0020-api-key-expiry", up: apiKeyExpiry.up },
  { name: "0021-exchange-rates", up: exchangeRates.up },
  { name: "0022-investments", up: investments.up },
  { name: "0023-partition-lock-order", up: partitionLockOrder.up },
  { name: "0024-ledger-months", up: ledgerMonths.up },
  { name: "0025-export-requester-session", up: exportRequesterSession.up },
  { name: "0027-imports", up: imports.up },
  { name: "0028-positions", up: positions.up },
];
