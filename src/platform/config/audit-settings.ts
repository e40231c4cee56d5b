import { z } from "zod";
import { setting } from "./settings-doc";
import { booleanFlag, channelBudgets, durationList, DURATIONS } from "./setting-values";

/** The audit product's settings (the log, exports and reports, SSO, streaming, retention, alerts), part of settings.ts. */
export const auditSettings = {
  AUDIT_PARTITIONS_AHEAD: setting(
    z.coerce.number().int().min(1).max(36).default(3),
    "Audit log",
    "Monthly audit-log partitions the daily maintenance job keeps created ahead of the current month.",
  ),
  AUDIT_COUNT_BUDGET_MS: setting(
    z.coerce.number().int().min(1).max(60000).default(20),
    "Audit log",
    "How long an audit-log page may spend counting its total (up to 10 000 matches, 1 000 for a free-text search), beside reading " +
      "the page itself. Past it the page comes with a lower bound instead of waiting: `total` = the matches counted by then, or the " +
      "end of the page if further, with `totalCapped` true.",
  ),
  EXPORT_DIR: setting(
    z.string().min(1).optional(),
    "Audit exports and reports",
    "Folder of audit export and report files and their manifests. Every API and worker process must see the same folder.",
    { default: "`DATA_DIR/exports`" },
  ),
  EXPORT_RETENTION_HOURS: setting(
    z.coerce
      .number()
      .min(0.01)
      .max(24 * 365)
      .default(24),
    "Audit exports and reports",
    "How long a finished export or report stays downloadable; then the cleanup job (every 15 minutes) removes the file and records " +
      "`audit.export.expired` / `audit.report.expired`.",
  ),
  EXPORT_URL_TTL_SECONDS: setting(
    z.coerce.number().int().min(10).max(86400).default(300),
    "Audit exports and reports",
    "Lifetime of a signed download URL, in seconds.",
  ),
  EXPORT_BATCH_ROWS: setting(
    z.coerce.number().int().min(100).max(100000).default(20000),
    "Audit exports and reports",
    "Events an export reads per database statement: each statement streams its rows as they are read, so memory does not follow it; " +
      "smaller batches mean shorter statements.",
  ),
  REPORT_MAX_ROWS: setting(
    z.coerce.number().int().min(10).max(100000).default(5000),
    "Audit exports and reports",
    "Rows a report lists per table; its totals always count every event, and a cut table says so.",
  ),
  AUDIT_HISTOGRAM_BUDGET_MS: setting(
    z.coerce.number().int().min(1).max(60000).default(500),
    "Audit log",
    "How long the console's events-per-bucket chart (`auditEventHistogram`) may spend counting exactly. Past it the counts are " +
      "estimated from a 2 % sample of the table's pages (`sampled: true`).",
  ),
  SSO_DISCOVERY_TTL_SECONDS: setting(
    z.coerce.number().int().min(0).default(3600),
    "Single sign-on",
    "How long an SSO provider's OpenID discovery document is cached (a configuration change or `testSsoProvider` fetches it at once).",
  ),
  SSO_JWKS_COOLDOWN_MS: setting(
    z.coerce.number().int().min(0).default(30000),
    "Single sign-on",
    "An ID token signed by a key missing from the cached JWKS fetches the JWKS again (the IdP rotated its keys), at most this often.",
  ),
  SSO_CLOCK_TOLERANCE_SECONDS: setting(
    z.coerce.number().int().min(0).max(300).default(60),
    "Single sign-on",
    "Clock difference with an IdP tolerated when checking ID token times.",
  ),
  SSO_TIMEOUT_SECONDS: setting(
    z.coerce.number().int().min(1).max(120).default(10),
    "Single sign-on",
    "Timeout of one request to an IdP (discovery, token, JWKS).",
  ),
  STREAM_POLL_MS: setting(
    z.coerce.number().int().min(50).max(60000).default(1000),
    "Audit streaming",
    "How often a worker looks for audit stream work when no wake-up came. Newly linked events wake workers at once through the event bus; " +
      "this is the safety net.",
  ),
  STREAM_LEASE_MS: setting(
    z.coerce.number().int().min(1000).default(120000),
    "Audit streaming",
    "How long a worker holds a destination while delivering a batch. A worker that dies mid-batch loses it after this long and another " +
      "delivers the batch again. A turn stops sending after half of it.",
  ),
  STREAM_CONCURRENCY: setting(
    z.coerce.number().int().min(1).max(100).default(8),
    "Audit streaming",
    "Destinations one worker process delivers to at once.",
  ),
  STREAM_RETRY_SCHEDULE: setting(
    durationList.default([5e3, 30e3, 120e3, 600e3, 1800e3, 3600e3, 7200e3, 14400e3, 28800e3, 43200e3, 57600e3, 86400e3]),
    "Audit streaming",
    "Waits before each retry of a failed delivery (±20 % jitter; a longer `Retry-After` wins). About 3 days in all; after the last one " +
      "the destination is marked failing.",
    { default: "`5s,30s,2m,10m,30m,1h,2h,4h,8h,12h,16h,24h`", range: `${DURATIONS}, each at most 7d, at most 50` },
  ),
  STREAM_DELIVERY_LOG_DAYS: setting(
    z.coerce.number().int().min(1).max(3650).default(30),
    "Audit streaming",
    "How long delivery attempts stay in a destination's delivery log, in days.",
  ),
  AUDIT_RETENTION_DATABASE_DAYS: setting(
    z.coerce.number().int().min(0).max(36500).optional(),
    "Audit retention",
    "Days a month stays in the database after it ends, until an administrator sets it in the console or with `updateAuditRetention` " +
      "(then the stored setting wins).",
    { default: "`90`" },
  ),
  AUDIT_RETENTION_TIERS: setting(
    z
      .string()
      .regex(
        /^(standard|extended|compliance)(,[a-z0-9._*]+=(standard|extended|compliance))*$/,
        "a tier (standard, extended or compliance), then optional category=tier rules: extended,auth.*=compliance",
      )
      .optional(),
    "Audit retention",
    "Tier of every event, then optional `category=tier` rules: `extended,auth.*=compliance`. Tiers: `standard` (90 days), " +
      "`extended` (1 year), `compliance` (7 years). Applies until an administrator changes the tiers.",
    { default: "`standard`", range: "a tier, then `pattern=tier` rules, comma-separated" },
  ),
  AUDIT_ARCHIVE_DIR: setting(z.string().min(1).optional(), "Audit retention", "Folder of retention archives (the default storage).", {
    default: "`DATA_DIR/audit-archive`",
  }),
  AUDIT_ARCHIVE_S3_BUCKET: setting(
    z.string().min(1).optional(),
    "Audit retention",
    "Store archives in this S3-compatible bucket instead (through the AWS SDK).",
  ),
  AUDIT_ARCHIVE_S3_PREFIX: setting(z.string().default(""), "Audit retention", "Key prefix inside the bucket, e.g. `finance-gateway/`.", {
    default: "empty",
  }),
  AUDIT_ARCHIVE_S3_ENDPOINT: setting(z.url().optional(), "Audit retention", "Endpoint URL of an S3-compatible service (MinIO, Ceph, …).", {
    default: "AWS",
  }),
  AUDIT_ARCHIVE_S3_REGION: setting(z.string().min(1).default("us-east-1"), "Audit retention", "Region the requests are signed for."),
  AUDIT_ARCHIVE_S3_ACCESS_KEY_ID: setting(
    z.string().min(1).optional(),
    "Audit retention",
    "Access key id; unset, the AWS SDK looks for credentials as usual (environment, profile, instance role).",
    { default: "the SDK's default chain" },
  ),
  AUDIT_ARCHIVE_S3_SECRET_ACCESS_KEY: setting(
    z.string().min(1).optional(),
    "Audit retention",
    "Secret access key, with `AUDIT_ARCHIVE_S3_ACCESS_KEY_ID`.",
    { default: "the SDK's default chain" },
  ),
  AUDIT_ARCHIVE_S3_FORCE_PATH_STYLE: setting(
    booleanFlag.default(false),
    "Audit retention",
    "`true` for services that need `endpoint/bucket/key` URLs (most self-hosted ones).",
  ),
  AUDIT_CHECKPOINT_KEY: setting(
    z.string().min(1).optional(),
    "Audit retention",
    "Ed25519 key that signs checkpoints, as a signed-note private key (`PRIVATE+KEY+name+id+…`). Unset, one is generated in " +
      "`DATA_DIR/audit-checkpoint-key` on first use.",
    { default: "generated" },
  ),
  AUDIT_CHECKPOINT_ORIGIN: setting(
    z
      .string()
      .regex(/^[\x21-\x2a\x2c-\x7e]+$/, "printable ASCII without spaces or +")
      .default("finance-gateway/audit"),
    "Audit retention",
    "Name of the log (the checkpoint's origin line and the generated key's name).",
    { range: "printable ASCII without spaces or `+`" },
  ),
  AUDIT_CHECKPOINT_FILE: setting(
    z.string().min(1).optional(),
    "Audit retention",
    "File the newest signed checkpoint is written to after each archived month (copy it somewhere the database's administrators cannot write).",
  ),
  AUDIT_ARCHIVE_MAX_LINE_BYTES: setting(
    z.coerce
      .number()
      .int()
      .min(64 * 1024)
      .max(256 * 1024 * 1024)
      .default(4 * 1024 * 1024),
    "Audit retention",
    "Longest archive line (one event) an archive read accepts; a longer one marks the archive as tampered instead of filling memory.",
    { default: "4194304 (4 MiB)" },
  ),
  AUDIT_ARCHIVE_REQUEST_BYTES: setting(
    z.coerce
      .number()
      .int()
      .min(1024 * 1024)
      .default(1024 * 1024 * 1024),
    "Audit retention",
    "Archive data (uncompressed bytes, as manifests count them) one API request may read: `auditArchiveSearch` and " +
      "`auditChainVerification` are refused with 400 past it, counting every field and alias of the request. The CLI's `audit verify` has no limit.",
    { default: "1073741824 (1 GiB)" },
  ),
  ALERT_POLL_MS: setting(
    z.coerce.number().int().min(50).max(60000).default(1000),
    "Alerts",
    "How often a worker looks for alert deliveries due when no firing woke it.",
  ),
  ALERT_RETRY_SCHEDULE: setting(
    durationList.default([10e3, 60e3, 300e3, 900e3, 3600e3]),
    "Alerts",
    "Waits before each retry of a failed alert delivery (e-mail, chat, webhook, SMS); after the last one the delivery is marked failed.",
    { default: "`10s,1m,5m,15m,1h`", range: `${DURATIONS}, each at most 7d, at most 50` },
  ),
  ALERT_COOLDOWN_SECONDS: setting(
    z.coerce.number().int().min(0).max(604800).default(0),
    "Alerts",
    "After a rule fires, further firings of that rule within this many seconds are held back and counted for its digest " +
      "(a rule's own cool-down overrides it). 0 turns the cool-down off. See [alerts](alerts.md#storm-limits).",
  ),
  ALERT_FIRING_CAP: setting(
    z.coerce.number().int().min(1).max(100000).default(10),
    "Alerts",
    "Firings one rule may send per cap period (ALERT_FIRING_CAP_WINDOW_SECONDS); past it firings are held back and one digest " +
      '("47 more since …") goes out when the period ends. A rule\'s own cap overrides it.',
  ),
  ALERT_FIRING_CAP_WINDOW_SECONDS: setting(
    z.coerce.number().int().min(1).max(604800).default(3600),
    "Alerts",
    "Length of a rule's cap period, in seconds: it starts with the rule's first firing after the previous period ended.",
  ),
  ALERT_CHANNEL_BUDGETS: setting(
    channelBudgets.default({ sms: 10, email: 60, chat: 120, webhook: 600 }),
    "Alerts",
    "Deliveries each kind of channel may send per budget period (ALERT_CHANNEL_BUDGET_WINDOW_SECONDS), per channel; past it " +
      "deliveries are kept as `suppressed` with the reason. Digests are not held back. Kinds left out keep their default.",
    { default: "`sms=10,email=60,chat=120,webhook=600`", range: "`kind=count` pairs (kinds email, chat, webhook, sms; count 1–100000)" },
  ),
  ALERT_CHANNEL_BUDGET_WINDOW_SECONDS: setting(
    z.coerce.number().int().min(1).max(604800).default(3600),
    "Alerts",
    "Length of the period a channel's send budget counts over, in seconds (a sliding window).",
  ),
  ALERT_GEO_DIRECTORY: setting(
    z.string().min(1).optional(),
    "Alerts",
    "A folder with newer `geo-whois-asn-country-ipv4-num.csv` / `-ipv6-num.csv` files (see [alerts](alerts.md#countries)).",
    { default: "the copy in the npm package" },
  ),
};
