import { QueryTypes } from "sequelize";
import { BuiltinProvider } from "../../src/finance/assistant/builtin.provider";
import { ToolRunner } from "../../src/finance/assistant/tools";
import { FamilyVocabulary } from "../../src/finance/assistant/vocabulary";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { graphqlClient } from "../helpers/graphql";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * The assistant's recurring-transactions tool and the built-in assistant's answer to "what bills are
 * due …?". The bills an answer lists are computed here by their own SQL, and the tool's rows are
 * those of GraphQL `upcomingBills`. A family with no recurring transactions, or none due, is told so.
 */
let app: TestApp;
let family: TestUser;
const today = new Date().toISOString().slice(0, 10);
const day = (offset: number, from = today) => new Date(Date.parse(`${from}T00:00:00Z`) + offset * 86_400_000).toISOString().slice(0, 10);
const monthEnd = (() => {
  const now = new Date(`${today}T00:00:00Z`);
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)).toISOString().slice(0, 10);
})();
const usd = (amount: string | number) => new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(Number(amount));

type Due = { name: string; amount: string; next: string };

/** The family's bills due from today through `last`, by SQL written for this test. */
async function dueBySql(familyId: string, last: string): Promise<Due[]> {
  return app.runtime.sequelize.query<Due>(
    `SELECT coalesce(r.name, m.name) AS name, r.amount::text AS amount, r.next_expected_date::text AS next
       FROM recurring_transactions r LEFT JOIN merchants m ON m.id = r.merchant_id
      WHERE r.family_id = $1 AND r.status = 'active' AND r.amount > 0 AND r.next_expected_date >= $2 AND r.next_expected_date <= $3
      ORDER BY r.next_expected_date, r.id`,
    { bind: [familyId, today, last], type: QueryTypes.SELECT },
  );
}

function toolsFor(user: TestUser, vocabulary: FamilyVocabulary): ToolRunner {
  const { repositories } = app.runtime.services;
  return new ToolRunner(
    { familyId: user.familyId, currency: "USD", today, vocabulary },
    { finance: repositories.finance, accounts: repositories.accounts },
  );
}

async function ask(user: TestUser, question: string): Promise<{ content: string; tools: ToolRunner }> {
  const vocabulary = new FamilyVocabulary(await app.runtime.services.repositories.finance.vocabulary(user.familyId));
  const tools = toolsFor(user, vocabulary);
  const { content } = await new BuiltinProvider().respond({
    model: "builtin",
    history: [{ role: "user", content: question }],
    context: { currency: "USD", today, vocabulary },
    tools,
    onDelta: () => undefined,
  });
  return { content, tools };
}

async function recurring(
  user: TestUser,
  fields: { name?: string; merchantId?: string; accountId?: string; amount: string; next: string; status?: string },
) {
  return app.runtime.services.recurring.create(user.actor, {
    name: fields.name,
    accountId: fields.accountId,
    merchantId: fields.merchantId,
    amount: fields.amount,
    expectedDayOfMonth: Number(fields.next.slice(8)),
    lastOccurrenceDate: day(-30, fields.next),
    nextExpectedDate: fields.next,
    status: fields.status ?? "active",
  });
}

beforeAll(async () => {
  app = await startTestApp();
  const { services } = app.runtime;
  family = await createUser(services);
  const checking = await createAccount(services, family, { name: "Checking" });
  const power = await services.merchants.create(family.actor, { name: "Powerco" });
  await recurring(family, { name: "Streamly", accountId: checking.id, amount: "15.99", next: today });
  await recurring(family, { name: "Rent", accountId: checking.id, amount: "1200.00", next: monthEnd });
  await recurring(family, { merchantId: power.id, accountId: checking.id, amount: "60.25", next: today });
  // Not due this month: next month, stopped, money in, and overdue (expected before today).
  await recurring(family, { name: "Gym", amount: "40.00", next: day(1, monthEnd) });
  await recurring(family, { name: "Old paper", amount: "9.50", next: today, status: "inactive" });
  await recurring(family, { name: "Salary", amount: "-3000.00", next: today });
  await recurring(family, { name: "Overdue insurance", amount: "80.00", next: day(-1) });
  // Another family's bill, due today.
  const neighbour = await createUser(services);
  await recurring(neighbour, { name: "Neighbour's bill", amount: "555.55", next: today });
});

afterAll(() => app.stop());

describe("what bills are due", () => {
  test("this month: every bill from today to the month's end, as upcomingBills lists them, with their total", async () => {
    const expected = await dueBySql(family.familyId, monthEnd);
    expect(expected.map((bill) => bill.name).sort()).toEqual(["Powerco", "Rent", "Streamly"]);
    const { content, tools } = await ask(family, "What bills are due this month?");

    const [call] = tools.calls;
    expect(call).toMatchObject({ name: "get_recurring_transactions", arguments: { due_before: monthEnd } });
    const rows = call.result.recurring_transactions as Array<{ name: string; amount: string; next_expected_date: string }>;
    expect(rows.map((row) => [row.name, row.amount, row.next_expected_date])).toEqual(
      expected.map((bill) => [bill.name, String(Number(bill.amount)), bill.next]),
    );
    const { upcomingBills } = await graphqlClient(app, family.key).ok(
      `query($before: Date) { upcomingBills(before: $before) { name merchant { name } amount nextExpectedDate } }`,
      { before: monthEnd },
    );
    expect(upcomingBills.map((bill: any) => [bill.name ?? bill.merchant.name, bill.nextExpectedDate])).toEqual(
      rows.map((row) => [row.name, row.next_expected_date]),
    );

    const sum = expected.reduce((total, bill) => total + Math.round(Number(bill.amount) * 100), 0) / 100;
    expect(content).toContain(
      `**3 bills** are due this month (${today === monthEnd ? today : `${today} to ${monthEnd}`}), **${usd(sum)}** in all:`,
    );
    for (const bill of expected) expect(content).toContain(`- ${bill.next} · ${bill.name}: ${usd(bill.amount)} (Checking)`);
    for (const absent of ["Gym", "Old paper", "Salary", "Overdue insurance", "Neighbour"]) expect(content).not.toContain(absent);
  });

  test("before the 15th: through the 14th of this month, or of next month once the 15th has come", async () => {
    const now = new Date(`${today}T00:00:00Z`);
    const fifteenth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + (now.getUTCDate() < 15 ? 0 : 1), 15));
    const last = day(-1, fifteenth.toISOString().slice(0, 10));
    const expected = await dueBySql(family.familyId, last);
    const { content, tools } = await ask(family, "Which bills are due before the 15th?");
    expect(tools.calls[0].arguments).toEqual({ due_before: last });
    expect(content).toContain(`${expected.length} bill`);
    for (const bill of expected) expect(content).toContain(`· ${bill.name}: ${usd(bill.amount)}`);
    expect(content).not.toContain("Neighbour");
  });

  test("a family without recurring transactions is told none is known, with no figure", async () => {
    const empty = await createUser(app.runtime.services);
    const { content } = await ask(empty, "What bills are due this month?");
    expect(content).toMatch(/^I don't know of any recurring bills yet: none has been entered or detected\./);
    expect(content).not.toContain("$");
  });

  test("a family whose bills all fall later is told none is due, and how many it has", async () => {
    const later = await createUser(app.runtime.services);
    await recurring(later, { name: "Water", amount: "30.00", next: day(1, monthEnd) });
    const { content } = await ask(later, "What bills are due this month?");
    expect(content).toBe(
      `No bills are due this month (${today === monthEnd ? today : `${today} to ${monthEnd}`}). You have 1 recurring transaction in all, none of them a bill expected in that time.`,
    );
  });
});

describe("the tool", () => {
  test("lists the active recurring transactions (subscriptions and income) with what the bills cost together", async () => {
    const tools = toolsFor(family, new FamilyVocabulary([]));
    const result = await tools.call("get_recurring_transactions", {});
    const [{ names, out }] = await app.runtime.sequelize.query<{ names: string[]; out: string }>(
      `SELECT array_agg(coalesce(r.name, m.name) ORDER BY r.next_expected_date, r.id) AS names,
              sum(r.amount) FILTER (WHERE r.amount > 0)::text AS out
         FROM recurring_transactions r LEFT JOIN merchants m ON m.id = r.merchant_id WHERE r.family_id = $1 AND r.status = 'active'`,
      { bind: [family.familyId], type: QueryTypes.SELECT },
    );
    const rows = result.recurring_transactions as Array<{ name: string; direction: string; amount: string }>;
    expect(rows.map((row) => row.name)).toEqual(names);
    expect(rows.find((row) => row.name === "Salary")).toMatchObject({ direction: "income", amount: "3000" });
    expect(result.money_out_by_currency).toEqual({ USD: String(Number(out)) });
    expect(result.recurring_known).toBe(7);
    const all = await tools.call("get_recurring_transactions", { status: "all" });
    expect((all.recurring_transactions as unknown[]).length).toBe(7);
  });

  test("refuses a deadline before today", async () => {
    const tools = toolsFor(family, new FamilyVocabulary([]));
    expect(await tools.call("get_recurring_transactions", { due_before: day(-1) })).toEqual({
      error: `due_before is before today (${today})`,
    });
  });
});
