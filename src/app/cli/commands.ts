/**
 * Every CLI command with its options and help text: the one source of `--help`, of each command's
 * usage (printed for an unknown option or a missing argument) and of the overview.
 */
type OptionSpec = { type: "string" | "boolean"; short?: string };

export type CommandSpec = {
  name: string;
  /** Options after the name, as printed in the usage line. */
  synopsis: string;
  summary: string;
  /** More lines for `<command> --help`. */
  details?: string[];
  options: Record<string, OptionSpec>;
  /** Names of required positional arguments, in order. */
  positionals?: string[];
  group: "Service" | "Data" | "Database" | "Audit" | "Development";
};

const none: Record<string, OptionSpec> = {};

export const COMMANDS: CommandSpec[] = [
  {
    name: "start",
    synopsis: "",
    summary: "API and workers in one process (embedded PostgreSQL when DATABASE_URL is unset)",
    details: ["Stops on SIGTERM or SIGINT (Ctrl-C): requests and jobs drain, then the embedded PostgreSQL stops; exit status 0."],
    options: none,
    group: "Service",
  },
  { name: "api", synopsis: "", summary: "API only", options: none, group: "Service" },
  { name: "worker", synopsis: "", summary: "workers only", options: none, group: "Service" },
  { name: "migrate", synopsis: "", summary: "apply database migrations", options: none, group: "Service" },
  {
    name: "demo",
    synopsis: "[--force] [--audit-history]",
    summary: "create the demo family and print API keys",
    details: [
      "The demo user is an instance administrator: its keys (even the read-only one) can list every user and SSO provider.",
      "Refuses to run on an instance that already has other families unless --force.",
      "--audit-history also records a past year of demo audit events (sign-ins, API key use, budget and valuation changes, rules applied)",
      'over the last 12 full months, each with user agent "finance-gateway demo history", and prints the events per month: months old',
      "enough for retention to archive (docs/audit-retention.md). Run again, it adds nothing.",
    ],
    options: { force: { type: "boolean" }, "audit-history": { type: "boolean" } },
    group: "Data",
  },
  {
    name: "user create",
    synopsis: "--email E [--family-of OTHER_EMAIL] [--role admin|auditor|member]",
    summary: "create a user, in a new family or in OTHER_EMAIL's",
    options: { email: { type: "string" }, "family-of": { type: "string" }, role: { type: "string" } },
    group: "Data",
  },
  {
    name: "api-key create",
    synopsis: "--email E --scope read|read_write [--name N]",
    summary: "issue an API key for a user (printed once)",
    options: { email: { type: "string" }, scope: { type: "string" }, name: { type: "string" } },
    group: "Data",
  },
  { name: "api-key revoke", synopsis: "--id ID", summary: "revoke an API key", options: { id: { type: "string" } }, group: "Data" },
  {
    name: "admin create",
    synopsis: "--email E [--password P]",
    summary: "an admin who signs in with a password (one is generated when omitted)",
    options: { email: { type: "string" }, password: { type: "string" } },
    group: "Data",
  },
  {
    name: "family-export restore",
    synopsis: "FILE --email E",
    summary: "load a family export (zip) into the empty family of user E",
    details: [
      "FILE is a zip from GET /api/v1/family_exports/{id}/download. Every file's SHA-256 and size are checked against its manifest.json first;",
      "then all.ndjson is written in one transaction (accounts, categories, tags, merchants, valuations, transactions, transfers, trades),",
      "with new ids, and the ledger derives the balances. The family must hold no finance data; family.restored is audited, naming E.",
      "Exit status 1 with the reason when the file is refused (nothing is written then).",
    ],
    options: { email: { type: "string" } },
    positionals: ["FILE"],
    group: "Data",
  },
  {
    name: "prices import",
    synopsis: "FILE",
    summary: "record security prices from a CSV file (ticker,date,price,currency)",
    details: [
      "FILE is a CSV with a header naming the columns ticker, date, price and currency (any order); one price per row:",
      "a known security's ticker (TICKER|MIC when several share it), a YYYY-MM-DD day, a price above 0, an ISO 4217 currency.",
      "A price replaces the one of the same security, day and currency. Every row is checked first: one bad row writes nothing",
      "and the error names it (row 1 is the row under the header). Prices are shared by every family: every manual investment",
      "account holding a security is revalued from the earliest day its price changed. security_prices.recorded is audited, with no user.",
    ],
    options: none,
    positionals: ["FILE"],
    group: "Data",
  },
  {
    name: "db url",
    synopsis: "",
    summary: "print the database's connection string (the embedded one's, with its password)",
    options: none,
    group: "Database",
  },
  {
    name: "db psql",
    synopsis: "",
    summary: "open psql on the database (needs the PostgreSQL client installed)",
    options: none,
    group: "Database",
  },
  {
    name: "backup",
    synopsis: "[--out FILE] [--passphrase-file FILE]",
    summary: "write a consistent backup of the whole database",
    details: [
      "FILE defaults to finance-gateway-<date>.backup in the current folder.",
      "Stored secrets are encrypted with the encryption key (ENCRYPTION_KEY or DATA_DIR/encryption-key): keep it with the backup,",
      "or pass --passphrase-file to include it sealed with the passphrase in that file (`-` reads it from standard input).",
    ],
    options: { out: { type: "string" }, "passphrase-file": { type: "string" } },
    group: "Database",
  },
  {
    name: "restore",
    synopsis: "FILE [--passphrase-file FILE]",
    summary: "load a backup into an empty database",
    details: [
      "The database (DATABASE_URL, or the embedded one) must hold no tables: start from an empty database or a new DATA_DIR.",
      "With --passphrase-file, the encryption key sealed in the backup is written to DATA_DIR/encryption-key (unless ENCRYPTION_KEY is set).",
    ],
    options: { "passphrase-file": { type: "string" } },
    positionals: ["FILE"],
    group: "Database",
  },
  {
    name: "audit verify",
    synopsis: "[--from DATE] [--to DATE] [--checkpoint FILE]",
    summary: "check the audit hash chain; exits 1 at the first broken link",
    details: [
      "Without dates the chain is checked as one line across archived months and the database, with every signed checkpoint.",
      "--checkpoint FILE also checks a signed checkpoint kept elsewhere (a copy of AUDIT_CHECKPOINT_FILE): the log must still hold it.",
      "A tampered or missing archive (altered line or manifest, corrupt or truncated gzip, a file from another month) is a broken link",
      "naming the archive and its first bad event, or its bad bytes. Exit status: 0 intact, 1 broken (the report says where),",
      '2 the check could not run (a missing --checkpoint file, no database): one line, or {"error"} with --json.',
    ],
    options: { from: { type: "string" }, to: { type: "string" }, checkpoint: { type: "string" } },
    group: "Audit",
  },
  {
    name: "audit retention run",
    synopsis: "",
    summary: "run the retention job now: archive months past the database window, delete expired archives",
    options: none,
    group: "Audit",
  },
  {
    name: "emit-contracts",
    synopsis: "",
    summary: "regenerate schema/schema.graphql, schema/openapi.yaml and the generated pages of docs/",
    options: none,
    group: "Development",
  },
];

/** The command named by the leading words of the command line (`api-key create`, `demo`), if any. */
export function findCommand(words: string[]): CommandSpec | null {
  const matches = COMMANDS.filter((spec) => {
    const nameWords = spec.name.split(" ");
    return nameWords.every((word, index) => words[index] === word);
  });
  // The longest name wins (`db url` over a hypothetical `db`).
  return matches.sort((a, b) => b.name.length - a.name.length)[0] ?? null;
}

export function commandUsage(spec: CommandSpec): string {
  return [
    `Usage: finance-gateway ${spec.name}${spec.synopsis ? ` ${spec.synopsis}` : ""} [--json]`,
    "",
    `  ${spec.summary}`,
    ...(spec.details ?? []).map((line) => `  ${line}`),
    "",
    "With --json the command prints exactly one JSON object on stdout. --help prints this text.",
  ].join("\n");
}

function overview(): string {
  const lines = ["Usage: finance-gateway <command> [options] [--json]", ""];
  for (const group of ["Service", "Data", "Database", "Audit", "Development"] as const) {
    lines.push(`${group}:`);
    for (const spec of COMMANDS.filter((candidate) => candidate.group === group)) {
      const head = `${spec.name}${spec.synopsis ? ` ${spec.synopsis}` : ""}`;
      lines.push(head.length <= 40 ? `  ${head.padEnd(40)}${spec.summary}` : `  ${head}\n  ${"".padEnd(40)}${spec.summary}`);
    }
    lines.push("");
  }
  lines.push("`finance-gateway <command> --help` describes one command. With --json a command prints exactly one JSON object on stdout.");
  return lines.join("\n");
}

export const USAGE = overview();
