import { spawnSync } from "node:child_process";
import { Client } from "pg";
import { COMMANDS } from "../../src/app/cli/commands";
import { main } from "../../src/app/main";
import { CLI, spawnUntilJson } from "../helpers/cli";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database";
import { eventually } from "../helpers/eventually";

/**
 * Issue 16: every command answers --help, a wrong option gets the command's usage, the demo is honest
 * about its administrator and refuses a shared instance, and the service's log is one readable line
 * per request.
 */
jest.setTimeout(90_000);

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.close());

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env: { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: "warn", ...env },
    encoding: "utf8",
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** The CLI in this process (what bin/finance-gateway.js calls), for the many cheap usage checks. */
async function inProcess(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const log = jest.spyOn(console, "log").mockImplementation((text: string) => void out.push(`${text}\n`));
  const error = jest.spyOn(console, "error").mockImplementation((text: string) => void err.push(`${text}\n`));
  process.exitCode = undefined;
  try {
    await main(args);
    return { status: process.exitCode ?? 0, stdout: out.join(""), stderr: err.join("") };
  } finally {
    log.mockRestore();
    error.mockRestore();
    process.exitCode = undefined;
  }
}

test("every command prints its own usage with --help, and answers an unknown option or argument with it", async () => {
  for (const command of COMMANDS) {
    const words = command.name.split(" ");
    const help = await inProcess([...words, "--help"]);
    expect(help).toMatchObject({ status: 0, stderr: "" });
    expect(help.stdout).toContain(`Usage: finance-gateway ${command.name}`);
    expect(help.stdout).toContain(command.summary);

    const wrong = await inProcess([...words, "--no-such-option"]);
    // `audit verify` answers 1 for a broken chain, so a check that could not run at all is 2 there.
    expect(wrong.status).toBe(command.name === "audit verify" ? 2 : 1);
    expect(wrong.stderr).toBe(`unknown option --no-such-option\n\n${help.stdout}`);
  }
  // The built CLI answers the same way.
  const built = cli(["backup", "--outt", "x"]);
  expect(built).toMatchObject({
    status: 1,
    stderr: expect.stringMatching(/^unknown option --outt\n\nUsage: finance-gateway backup \[--out FILE\]/),
  });
  const extra = await inProcess(["migrate", "now"]);
  expect(extra).toMatchObject({ status: 1, stderr: expect.stringMatching(/^unexpected argument "now"\n\nUsage: finance-gateway migrate/) });
  const missing = await inProcess(["user", "create", "--email"]);
  expect(missing.stderr).toMatch(/^--email needs a value\n\nUsage: finance-gateway user create/);
  const overview = await inProcess(["--help"]);
  for (const command of COMMANDS) expect(overview.stdout).toContain(command.name);
  expect(await inProcess(["frobnicate"])).toMatchObject({
    status: 1,
    stderr: expect.stringMatching(/^unknown command "frobnicate"\n\nUsage:/),
  });
  expect(JSON.parse((await inProcess(["demo", "--bogus", "--json"])).stdout).error).toMatch(
    /^unknown option --bogus\n\nUsage: finance-gateway demo/,
  );
});

test("the demo says its user is an administrator, refuses an instance with other families unless --force, and owes positive amounts", async () => {
  expect(cli(["user", "create", "--email", "someone@example.com"]).status).toBe(0);
  const refused = cli(["demo"]);
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(/^this instance already has 1 family; the demo user is an instance administrator .* add --force\n$/);

  const demo = cli(["demo", "--force"]);
  expect(demo.status).toBe(0);
  expect(demo.stdout).toMatch(
    /user +demo@finance-gateway\.local +\(an instance administrator: its keys can list every user and SSO provider\)/,
  );

  const client = new Client({ connectionString: database.url });
  await client.connect();
  try {
    // Each transaction-fed account's month-end balance over the 18 months, derived back from today's as the service
    // does (the house and the car move only with their valuations).
    const { rows } = await client.query<{ name: string; classification: string; month_end: string; balance: string }>(
      `WITH month_ends AS (
         SELECT (date_trunc('month', current_date) - make_interval(months => g) + interval '1 month - 1 day')::date AS month_end
           FROM generate_series(0, 17) g)
       SELECT a.name, a.classification, e.month_end::text,
              CASE WHEN a.classification = 'asset' THEN a.balance + coalesce(later.sum, 0) ELSE a.balance - coalesce(later.sum, 0) END AS balance
         FROM month_ends e CROSS JOIN accounts a JOIN users u ON u.family_id = a.family_id AND u.email = 'demo@finance-gateway.local'
              AND a.account_type NOT IN ('property', 'vehicle')
         LEFT JOIN LATERAL (SELECT sum(t.amount) FROM transactions t WHERE t.account_id = a.id AND t.date > e.month_end) later ON true`,
    );
    expect(rows.length).toBe(4 * 18);
    for (const row of rows) expect({ ...row, positive: Number(row.balance) >= 0 }).toMatchObject({ positive: true });
    const card = rows.filter((row) => row.classification === "liability");
    // Paid in full every month: never more than about two months of spending owed.
    for (const row of card) expect(Number(row.balance)).toBeLessThan(15_000);
  } finally {
    await client.end();
  }
});

test("LOG_FORMAT=pretty writes one readable line per request, without headers", async () => {
  const { child, output } = await spawnUntilJson<{ rest: string }>(
    [CLI, "start", "--json"],
    { ...process.env, DATABASE_URL: database.url, PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", LOG_FORMAT: "pretty" },
    "rest",
  );
  try {
    const banner = output()
      .split("\n")
      .find((line) => line.startsWith('{"rest"'))!;
    const base = JSON.parse(banner).rest.replace(/\/api\/v1$/, "");
    await fetch(`${base}/healthz`, { headers: { "x-request-id": "pretty-1", "x-api-key": "fgk_not_logged" } });
    await eventually(() => output().includes("pretty-1"), { what: "the request's log line", timeout: 5000 });
    const lines = output().split("\n");
    const request = lines.findIndex((line) => /INFO.*GET \/healthz 200 [\d.]+ms \[pretty-1\]$/.test(line));
    expect(request).toBeGreaterThan(-1);
    expect(lines[request].startsWith("{")).toBe(false);
    // One line: the next line is not a continuation of it.
    expect(lines[request + 1] ?? "").not.toMatch(/^\s+(method|path|status|ms|requestId):/);
    expect(output()).not.toContain("fgk_not_logged");
    expect(output()).not.toMatch(/headers|user-agent/i);
  } finally {
    child.kill("SIGTERM");
    await new Promise((resolve) => child.once("exit", resolve));
  }
});
