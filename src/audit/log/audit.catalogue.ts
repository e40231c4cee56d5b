/**
 * Every audit event type the service records (docs/audit-events.md) with its default severity. An event
 * type outside this catalogue cannot be recorded: `record()` takes an `AuditEventType`, and the
 * service checks the value again at run time for callers that build types from strings.
 */
export const SEVERITIES = ["info", "warning", "error", "critical"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** The 24 event types of the interface spec (§6). */
export const SPEC_EVENT_CATALOGUE = {
  "auth.login.success": { severity: "info", meaning: "successful login" },
  "auth.login.failed": { severity: "warning", meaning: "failed login attempt" },
  "auth.logout": { severity: "info", meaning: "user logout, including relying-party-initiated" },
  "auth.token.issued": { severity: "info", meaning: "access token issued" },
  "auth.token.refreshed": { severity: "info", meaning: "access token refreshed" },
  "auth.token.revoked": { severity: "warning", meaning: "access token revoked" },
  "auth.session.expired": { severity: "info", meaning: "session expired" },
  "provider.created": { severity: "info", meaning: "SSO provider added" },
  "provider.updated": { severity: "info", meaning: "configuration changed" },
  "provider.deleted": { severity: "warning", meaning: "provider removed" },
  "provider.enabled": { severity: "info", meaning: "provider enabled" },
  "provider.disabled": { severity: "warning", meaning: "provider disabled" },
  "provider.test": { severity: "info", meaning: "test login performed" },
  "user.created": { severity: "info", meaning: "account created" },
  "user.updated": { severity: "info", meaning: "profile updated" },
  "user.suspended": { severity: "warning", meaning: "account suspended" },
  "user.reactivated": { severity: "info", meaning: "suspended account reactivated" },
  "user.deleted": { severity: "warning", meaning: "account deleted" },
  "user.roles.synced": { severity: "info", meaning: "roles synchronized from the identity provider" },
  "user.roles.updated": { severity: "info", meaning: "roles manually updated" },
  "account.connected": { severity: "info", meaning: "SSO account connected to a user" },
  "account.disconnected": { severity: "warning", meaning: "SSO account disconnected" },
  "account.linked": { severity: "info", meaning: "several SSO accounts linked" },
  "account.unlinked": { severity: "warning", meaning: "SSO accounts unlinked" },
} as const satisfies Record<string, { severity: Severity; meaning: string }>;

/**
 * Event types of the service's own beyond the spec: evidence leaving the log (exports, reports, streaming
 * destinations) is itself logged.
 */
export const SERVICE_EVENT_CATALOGUE = {
  "user.unlocked": { severity: "warning", meaning: "an administrator lifted an account's lock after repeated wrong passwords" },
  "family.reset": {
    severity: "warning",
    meaning: "a family's financial data deleted at an administrator's request, users and audit log kept (rows per table in changes)",
  },
  "auth.api_key.created": { severity: "info", meaning: "API key issued (owner, scope and expiry in changes)" },
  "auth.api_key.revoked": { severity: "warning", meaning: "API key revoked" },
  "auth.mfa.enrolled": { severity: "info", meaning: "two-factor (TOTP) sign-in turned on, recovery codes issued" },
  "auth.mfa.verified": { severity: "info", meaning: "a sign-in's second factor proven with a TOTP code" },
  "auth.mfa.recovery_code_used": { severity: "warning", meaning: "a sign-in's second factor proven with a one-time recovery code" },
  "auth.mfa.reset": { severity: "warning", meaning: "an administrator turned a user's two-factor sign-in off (the user enrols again)" },
  "auth.api_key.expired": { severity: "info", meaning: "API key reached its expiry and stopped working (expiry in changes)" },
  "audit.export.requested": { severity: "info", meaning: "audit log export requested" },
  "audit.export.completed": { severity: "info", meaning: "audit log export written (rows and checksum in changes)" },
  "audit.export.failed": { severity: "error", meaning: "audit log export failed" },
  "audit.export.downloaded": { severity: "info", meaning: "audit log export downloaded" },
  "audit.export.expired": { severity: "info", meaning: "audit log export file removed after its expiry" },
  "audit.report.requested": { severity: "info", meaning: "compliance report requested" },
  "audit.report.completed": { severity: "info", meaning: "compliance report written (checksum in changes)" },
  "audit.report.failed": { severity: "error", meaning: "compliance report failed" },
  "audit.report.downloaded": { severity: "info", meaning: "compliance report downloaded" },
  "audit.report.expired": { severity: "info", meaning: "compliance report file removed after its expiry" },
  "stream.destination.created": { severity: "info", meaning: "audit stream destination (webhook or SIEM) added" },
  "stream.destination.updated": { severity: "info", meaning: "audit stream destination configuration changed" },
  "stream.destination.deleted": { severity: "warning", meaning: "audit stream destination removed" },
  "stream.destination.paused": { severity: "warning", meaning: "delivery to a destination paused" },
  "stream.destination.resumed": { severity: "info", meaning: "delivery to a destination resumed" },
  "stream.destination.secret_rotated": { severity: "info", meaning: "webhook signing secret rotated" },
  "stream.destination.replayed": { severity: "info", meaning: "destination position moved back for replay" },
  "stream.destination.tested": { severity: "info", meaning: "test event sent to a destination" },
  "stream.destination.failing": { severity: "error", meaning: "delivery retries exhausted; events wait for replay" },
  "stream.destination.disabled": { severity: "error", meaning: "destination disabled by its receiver (410 Gone)" },
  "audit.retention.updated": { severity: "warning", meaning: "retention tiers or database window changed" },
  "audit.archive.created": { severity: "info", meaning: "a month left the database into verified archives (manifests in changes)" },
  "audit.archive.deleted": { severity: "warning", meaning: "an archive past its tier's retention deleted" },
  "audit.archive.searched": { severity: "info", meaning: "archives searched" },
  "audit.archive.restored": { severity: "info", meaning: "an archived month loaded back into the database" },
  "audit.archive.released": { severity: "info", meaning: "a restored month removed from the database again" },
  "audit.checkpoint.signed": { severity: "info", meaning: "signed checkpoint of the chain at an archived month (the note in changes)" },
  "alert.rule.created": { severity: "info", meaning: "alert rule added (or a preset enabled)" },
  "alert.rule.updated": { severity: "info", meaning: "alert rule changed, enabled or disabled" },
  "alert.rule.deleted": { severity: "warning", meaning: "alert rule removed" },
  "alert.channel.created": { severity: "info", meaning: "alert notification channel added" },
  "alert.channel.updated": { severity: "info", meaning: "alert notification channel changed (secrets redacted)" },
  "alert.channel.deleted": { severity: "warning", meaning: "alert notification channel removed" },
  "alert.channel.tested": { severity: "info", meaning: "test alert sent to a channel (error when it failed)" },
  "alert.rule.limited": {
    severity: "warning",
    meaning: "a rule's storm limit (cool-down or firing cap) began holding firings back for its digest (once per cap period)",
  },
  "alert.channel.limited": {
    severity: "warning",
    meaning: "a channel's send budget began holding deliveries back (once per budget period)",
  },
  "valuation.created": { severity: "info", meaning: "an account's value recorded on a day (a reconciliation), its balances recomputed" },
  "valuation.updated": { severity: "info", meaning: "a valuation's amount, date or notes changed, its account's balances recomputed" },
  "valuation.deleted": { severity: "warning", meaning: "a valuation removed, its account's balances recomputed" },
  "trade.created": { severity: "info", meaning: "a buy or sell recorded on an investment account, its holdings and balances recomputed" },
  "trade.updated": {
    severity: "info",
    meaning: "a trade's quantity, price, side, date or notes changed, its account's holdings and balances recomputed",
  },
  "trade.deleted": { severity: "warning", meaning: "a trade removed, its account's holdings and balances recomputed" },
  "security_prices.recorded": {
    severity: "info",
    meaning:
      "security prices entered by an administrator or imported from a file (by the CLI: no user), shared by every family; the manual accounts holding them revalued (counts, securities and days in changes)",
  },
  "budget.updated": {
    severity: "info",
    meaning: "a month's budget set (created on its first write) or one of its category allocations changed",
  },
  "rule.created": { severity: "info", meaning: "a categorisation rule added (conditions and actions in changes)" },
  "rule.updated": { severity: "info", meaning: "a categorisation rule changed, enabled or disabled" },
  "rule.deleted": { severity: "info", meaning: "a categorisation rule removed (its runs stay, without it)" },
  "rule.applied": { severity: "info", meaning: "a rule applied to the family's transactions on demand (counts in changes)" },
  "recurring_transaction.created": { severity: "info", meaning: "a recurring transaction entered by hand" },
  "recurring_transaction.updated": { severity: "info", meaning: "a recurring transaction's status, day or next date changed" },
  "recurring_transaction.deleted": { severity: "info", meaning: "a recurring transaction removed" },
  "recurring_transaction.detected": {
    severity: "info",
    meaning: "recurring transactions detected from the family's history (counts in changes)",
  },
  "family_export.created": { severity: "info", meaning: "a family data export requested (written by a worker)" },
  "family_export.completed": {
    severity: "info",
    meaning: "a family data export written (rows per file and the zip's SHA-256 in changes)",
  },
  "family_export.failed": { severity: "error", meaning: "a family data export could not be written" },
  "family_export.downloaded": { severity: "info", meaning: "a family data export downloaded through its signed URL" },
  "family.restored": {
    severity: "warning",
    meaning: "a family export loaded into an empty family, its manifest verified (rows per record type in changes)",
  },
  "import.created": { severity: "info", meaning: "a file uploaded as a pending import (rows and rows with problems in changes)" },
  "import.published": {
    severity: "info",
    meaning: "an import's rows written as transactions in one go (written and duplicate counts in changes)",
  },
  "transaction.created": {
    severity: "info",
    meaning: "a transaction entered (by a client, not a bank sync's import), its account's balances recomputed",
  },
  "transaction.updated": {
    severity: "info",
    meaning: "a transaction's amount, date, account, name, notes, category, merchant or tags changed (old and new in changes)",
  },
  "transaction.deleted": { severity: "warning", meaning: "a transaction removed (a transfer leg: the transfer's link with it)" },
  "transfer.created": { severity: "info", meaning: "money moved between two of the family's accounts (both legs' ids in changes)" },
  "finance_account.created": { severity: "info", meaning: "a finance account opened (type, currency and opening balance in changes)" },
  "finance_account.updated": {
    severity: "info",
    meaning: "a finance account's name, type or currency changed, or its current balance set",
  },
  "finance_account.deleted": { severity: "warning", meaning: "a finance account removed, with its transactions and history" },
  "category.created": { severity: "info", meaning: "a transaction category added" },
  "category.updated": { severity: "info", meaning: "a category's name, classification, color, icon or parent changed" },
  "category.deleted": {
    severity: "info",
    meaning: "a category removed (its transactions become uncategorised, its subcategories top-level)",
  },
  "merchant.created": { severity: "info", meaning: "a merchant added" },
  "merchant.updated": { severity: "info", meaning: "a merchant's name, color or logo changed" },
  "merchant.deleted": { severity: "info", meaning: "a merchant removed (its transactions keep no merchant)" },
  "tag.created": { severity: "info", meaning: "a tag added" },
  "tag.updated": { severity: "info", meaning: "a tag's name or color changed" },
  "tag.deleted": { severity: "info", meaning: "a tag removed (and from every transaction carrying it)" },
  "exchange_rate.set": {
    severity: "info",
    meaning: "a currency pair's rate for a day entered or replaced; the family's converted totals use it",
  },
  "exchange_rate.deleted": {
    severity: "warning",
    meaning: "an exchange rate removed; totals fall back to an older rate or leave the currency unconverted",
  },
} as const satisfies Record<string, { severity: Severity; meaning: string }>;

export const AUDIT_EVENT_CATALOGUE = { ...SPEC_EVENT_CATALOGUE, ...SERVICE_EVENT_CATALOGUE };

export type AuditEventType = keyof typeof AUDIT_EVENT_CATALOGUE;

export const AUDIT_EVENT_TYPES = Object.keys(AUDIT_EVENT_CATALOGUE) as AuditEventType[];
export const SPEC_EVENT_TYPES = Object.keys(SPEC_EVENT_CATALOGUE) as (keyof typeof SPEC_EVENT_CATALOGUE)[];

export function isAuditEventType(value: string): value is AuditEventType {
  return Object.prototype.hasOwnProperty.call(AUDIT_EVENT_CATALOGUE, value);
}

export function isSeverity(value: string): value is Severity {
  return (SEVERITIES as readonly string[]).includes(value);
}

export function defaultSeverity(type: AuditEventType): Severity {
  return AUDIT_EVENT_CATALOGUE[type].severity;
}

/** An emitter may raise an event's severity above its default, never lower it. */
export function effectiveSeverity(type: AuditEventType, requested?: Severity): Severity {
  const base = defaultSeverity(type);
  if (!requested) return base;
  return SEVERITIES.indexOf(requested) > SEVERITIES.indexOf(base) ? requested : base;
}

/**
 * The event types a filter term names: an exact type, or a prefix ending in `.*` (`auth.*`,
 * `user.roles.*`). Null when the term names nothing in the catalogue.
 */
export function expandEventTypePattern(pattern: string): AuditEventType[] | null {
  const term = pattern.trim();
  if (term.endsWith(".*")) {
    const prefix = term.slice(0, -1);
    const matches = AUDIT_EVENT_TYPES.filter((type) => type.startsWith(prefix));
    return matches.length ? matches : null;
  }
  return isAuditEventType(term) ? [term] : null;
}

/** The event types a list of patterns names, each once (empty: every type, as readChain reads it). */
export function expandEventTypePatterns(patterns: string[]): AuditEventType[] {
  return [...new Set(patterns.flatMap((pattern) => expandEventTypePattern(pattern) ?? []))];
}
