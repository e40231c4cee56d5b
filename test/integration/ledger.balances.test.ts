import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { graphqlClient } from "../helpers/graphql";
import { apiKeyClient } from "../helpers/http";
import { allBalanceRows as rowsOf, expectMatchesOracle as matchesOracle } from "../helpers/ledger-oracle";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * The ledger as clients see it: an account's balance is derived from its transactions and
 * valuations, every day something happened has a balance row, and every figure equals the test's own
 * SQL recomputation (helpers/ledger-oracle.ts).
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const api = (user: TestUser) => apiKeyClient(`${app.url}/api/v1`, user.key);
const allBalanceRows = (user: TestUser, query = "") => rowsOf(app, user, query);
const expectMatchesOracle = (user: TestUser) => matchesOracle(app, user);

describe("a manual account", () => {
  let user: TestUser;
  let accountId: string;
  beforeAll(async () => {
    user = await createUser(app.runtime.services);
    accountId = (await createAccount(app.runtime.services, user, { name: "Everyday Checking", balance: "6281.42" })).id;
  });

  test("opens with an anchor two years back holding the balance it was created with", async () => {
    const { body } = await api(user).get(`/valuations?account_id=${accountId}`);
    expect(body.valuations).toHaveLength(1);
    const [anchor] = body.valuations;
    expect(anchor).toMatchObject({
      kind: "opening_anchor",
      amount: "$6,281.42",
      currency: "USD",
      account: { id: accountId, account_type: "depository" },
    });
    const twoYearsAgo = new Date();
    twoYearsAgo.setUTCFullYear(twoYearsAgo.getUTCFullYear() - 2);
    expect(anchor.date).toBe(twoYearsAgo.toISOString().slice(0, 10));
    await expectMatchesOracle(user);
  });

  test("an expense written by a client lowers the account and the balance sheet at once; deleting it restores them", async () => {
    const created = await api(user).post("/transactions", {
      transaction: { account_id: accountId, date: "2026-03-02", amount: "1000.00", name: "Laptop", nature: "expense" },
    });
    expect(created.status).toBe(201);
    expect((await api(user).get(`/accounts/${accountId}`)).body.balance).toBe("$5,281.42");
    expect((await api(user).get("/balance_sheet")).body.net_worth.amount).toBe("5281.42");
    await expectMatchesOracle(user);

    expect((await api(user).delete(`/transactions/${created.body.id}`)).status).toBe(200);
    expect((await api(user).get(`/accounts/${accountId}`)).body.balance).toBe("$6,281.42");
    await expectMatchesOracle(user);
  });

  test("a backdated write recomputes from its day on: earlier rows are not rewritten", async () => {
    await api(user).post("/transactions", {
      transaction: { account_id: accountId, date: "2026-01-10", amount: "50", name: "Early", nature: "expense" },
    });
    await api(user).post("/transactions", {
      transaction: { account_id: accountId, date: "2026-05-10", amount: "20", name: "Late", nature: "income" },
    });
    const before = await allBalanceRows(user, `&account_id=${accountId}`);
    await api(user).post("/transactions", {
      transaction: { account_id: accountId, date: "2026-03-15", amount: "7.25", name: "Middle", nature: "expense" },
    });
    const after = await allBalanceRows(user, `&account_id=${accountId}`);
    // The days up to the row before the write's day keep their figures and their rows' timestamps; the
    // days between that row and the write's day stand on the write's new row now (a day without a row
    // shows the one after it), with the same figures.
    const early = (rows: Array<Record<string, any>>, until: string, columns: string[]) =>
      rows.filter((row) => row.date < until).map((row) => columns.map((column) => row[column]));
    expect(early(after, "2026-01-11", ["id", "updated_at", "end_balance"])).toEqual(
      early(before, "2026-01-11", ["id", "updated_at", "end_balance"]),
    );
    expect(early(after, "2026-03-15", ["id", "start_balance", "end_balance"])).toEqual(
      early(before, "2026-03-15", ["id", "start_balance", "end_balance"]),
    );
    // Every calendar day was listed before and is after; the write's day now has its own flows.
    expect(after.map((row) => row.date)).toEqual(before.map((row) => row.date));
    const flows = (row?: Record<string, any>) => [row?.cash_outflows, Number(row?.start_balance_cents) - Number(row?.end_balance_cents)];
    expect(flows(before.find((row) => row.date === "2026-03-15"))).toEqual(["$0.00", 0]);
    expect(flows(after.find((row) => row.date === "2026-03-15"))).toEqual(["$7.25", 725]);
    const may = after.find((row) => row.date === "2026-05-10")!;
    expect(may).toMatchObject({ start_balance: "$6,224.17", cash_inflows: "$20.00", end_balance: "$6,244.17" });
    await expectMatchesOracle(user);
  });

  test("a valuation's day ends at the valuation; later transactions move on from it; a second one that day updates it", async () => {
    const first = await api(user).post("/valuations", {
      valuation: { account_id: accountId, date: "2026-04-01", amount: "7000", notes: "Statement" },
    });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ kind: "reconciliation", amount: "$7,000.00", notes: "Statement", date: "2026-04-01" });
    // The May income of 20 follows the valuation.
    expect((await api(user).get(`/accounts/${accountId}`)).body.balance).toBe("$7,020.00");
    const april = (await allBalanceRows(user, `&account_id=${accountId}&start_date=2026-04-01&end_date=2026-04-01`))[0];
    expect(april).toMatchObject({ start_balance: "$6,224.17", end_balance: "$7,000.00", cash_adjustments: "$775.83" });

    const again = await api(user).post("/valuations", { valuation: { account_id: accountId, date: "2026-04-01", amount: "6900" } });
    expect([again.status, again.body.id, again.body.notes]).toEqual([201, first.body.id, "Statement"]);
    const upserted = await api(user).post("/valuations?upsert=true", {
      valuation: { account_id: accountId, date: "2026-04-01", amount: "6950" },
    });
    expect([upserted.status, upserted.body.id, upserted.body.amount]).toEqual([200, first.body.id, "$6,950.00"]);
    expect((await api(user).get(`/accounts/${accountId}`)).body.balance).toBe("$6,970.00");
    await expectMatchesOracle(user);

    const moved = await api(user).patch(`/valuations/${first.body.id}`, { valuation: { date: "2026-05-20", amount: "100" } });
    expect(moved.status).toBe(200);
    expect((await api(user).get(`/accounts/${accountId}`)).body.balance).toBe("$100.00");
    const half = await api(user).patch(`/valuations/${first.body.id}`, { valuation: { amount: "5" } });
    expect(half.status).toBe(422);
    await expectMatchesOracle(user);
  });

  test("setting an account's balance follows upstream: a cash account without reconciliations shifts its opening anchor", async () => {
    const other = await createUser(app.runtime.services);
    const savings = await createAccount(app.runtime.services, other, { name: "Savings", balance: "100" });
    await api(other).post("/transactions", {
      transaction: { account_id: savings.id, date: "2026-02-01", amount: "40", name: "Out", nature: "expense" },
    });
    const gql = graphqlClient(app, other.key);
    await gql.ok(`mutation($id: ID!) { updateAccount(id: $id, input: { balance: "500" }) { balance } }`, { id: savings.id });
    const { body } = await api(other).get(`/valuations?account_id=${savings.id}`);
    expect(body.valuations.map((v: Record<string, any>) => [v.kind, v.amount])).toEqual([["opening_anchor", "$540.00"]]);
    expect((await api(other).get(`/accounts/${savings.id}`)).body.balance).toBe("$500.00");
    await expectMatchesOracle(other);
  });
});

test("a liability owes more with each expense; a transfer paying it moves both accounts and leaves net worth alone", async () => {
  const user = await createUser(app.runtime.services);
  const checking = await createAccount(app.runtime.services, user, { name: "Checking", balance: "1000" });
  const card = await createAccount(app.runtime.services, user, { name: "Card", accountType: "credit_card" });
  await api(user).post("/transactions", {
    transaction: { account_id: card.id, date: "2026-06-03", amount: "120.40", name: "Dinner", nature: "expense" },
  });
  expect((await api(user).get(`/accounts/${card.id}`)).body.balance).toBe("$120.40");
  const netWorth = async () => (await api(user).get("/balance_sheet")).body.net_worth.amount;
  expect(await netWorth()).toBe("879.6");
  const gql = graphqlClient(app, user.key);
  await gql.ok(`mutation($input: TransferInput!) { createTransfer(input: $input) { id } }`, {
    input: { fromAccountId: checking.id, toAccountId: card.id, date: "2026-06-25", amount: "120.40" },
  });
  expect((await api(user).get(`/accounts/${card.id}`)).body.balance).toBe("$0.00");
  expect((await api(user).get(`/accounts/${checking.id}`)).body.balance).toBe("$879.60");
  expect(await netWorth()).toBe("879.6");
  const [row] = await allBalanceRows(user, `&account_id=${card.id}&start_date=2026-06-25`);
  expect(row).toMatchObject({ flows_factor: -1, cash_inflows: "$120.40", start_balance: "$120.40", end_balance: "$0.00" });
  await expectMatchesOracle(user);
});

test("a house keeps its value through transactions; its valuations move it", async () => {
  const user = await createUser(app.runtime.services);
  const house = await createAccount(app.runtime.services, user, { name: "House", accountType: "property", balance: "350000" });
  await api(user).post("/transactions", {
    transaction: { account_id: house.id, date: "2026-02-01", amount: "900", name: "Roof repair", nature: "expense" },
  });
  expect((await api(user).get(`/accounts/${house.id}`)).body).toMatchObject({ balance: "$350,000.00", cash_balance: "$0.00" });
  await api(user).post("/valuations", { valuation: { account_id: house.id, date: "2026-03-01", amount: "372500" } });
  expect((await api(user).get(`/accounts/${house.id}`)).body.balance).toBe("$372,500.00");
  const [row] = await allBalanceRows(user, `&account_id=${house.id}&start_date=2026-03-01`);
  expect(row).toMatchObject({ cash_balance: "$0.00", end_non_cash_balance: "$372,500.00", non_cash_adjustments: "$22,500.00" });
  await expectMatchesOracle(user);
});

test("concurrent writes to one account take turns: creates, an update, a delete and a valuation leave the figures the oracle's", async () => {
  const user = await createUser(app.runtime.services);
  const account = await createAccount(app.runtime.services, user, { name: "Shared", balance: "1000" });
  const create = (date: string, amount: string) =>
    api(user).post("/transactions", { transaction: { account_id: account.id, date, amount, name: `On ${date}`, nature: "expense" } });
  const [moved, removed] = await Promise.all([create("2026-01-10", "5"), create("2026-01-11", "7")]);
  // Creates lock after inserting; the update, the delete and the valuation lock before writing.
  const answers = await Promise.all([
    ...["2026-01-10", "2026-01-10", "2026-01-12", "2026-02-01", "2026-02-01", "2026-03-05"].map((date, index) =>
      create(date, `${index + 1}.25`),
    ),
    api(user).put(`/transactions/${moved.body.id}`, { transaction: { date: "2026-02-01", amount: "40" } }),
    api(user).delete(`/transactions/${removed.body.id}`),
    api(user).post("/valuations", { valuation: { account_id: account.id, date: "2026-01-31", amount: "900" } }),
    create("2026-01-31", "3"),
  ]);
  expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201, 201, 200, 200, 201, 201]);
  await expectMatchesOracle(user);
});

describe("reading balances", () => {
  let user: TestUser;
  let stranger: TestUser;
  let accountId: string;
  beforeAll(async () => {
    user = await createUser(app.runtime.services);
    stranger = await createUser(app.runtime.services);
    accountId = (await createAccount(app.runtime.services, user, { balance: "10" })).id;
    await createAccount(app.runtime.services, user, { name: "Euros", currency: "EUR", balance: "5" });
    for (const [date, amount] of [
      ["2026-01-05", "1"],
      ["2026-02-05", "2"],
      ["2026-02-20", "3"],
      ["2026-03-05", "4"],
    ])
      await api(user).post("/transactions", { transaction: { account_id: accountId, date, amount, name: "Coffee", nature: "expense" } });
  });

  test("newest day first, paged, filtered by account, currency and dates", async () => {
    // A row for every calendar day from the opening anchor to the newest transaction, 5 March.
    const [opening] = (await api(user).get(`/valuations?account_id=${accountId}`)).body.valuations;
    const days = (Date.parse("2026-03-05") - Date.parse(opening.date)) / 86_400_000 + 1;
    const page = await api(user).get(`/balances?account_id=${accountId}&per_page=2&page=2`);
    expect(page.body.pagination).toEqual({ page: 2, per_page: 2, total_count: days, total_pages: Math.ceil(days / 2) });
    expect(page.body.balances.map((row: Record<string, any>) => row.date)).toEqual(["2026-03-03", "2026-03-02"]);
    // The last page counts back to the opening anchor's day, whatever the offset.
    const last = await api(user).get(`/balances?account_id=${accountId}&per_page=2&page=${Math.ceil(days / 2)}`);
    expect(last.body.balances.at(-1).date).toBe(opening.date);
    expect((await api(user).get(`/balances?account_id=${accountId}&per_page=2&page=${days}`)).body).toMatchObject({
      balances: [],
      pagination: { total_count: days },
    });
    const euros = await api(user).get("/balances?currency=eur");
    expect(euros.body.balances.map((row: Record<string, any>) => [row.currency, row.balance])).toEqual([["EUR", "€5.00"]]);
    // February: 28 days; the 5th and the 20th move the balance, every other day carries the day before's end.
    const window = await api(user).get(`/balances?account_id=${accountId}&start_date=2026-02-01&end_date=2026-02-28&per_page=100`);
    const february = window.body.balances.map((row: Record<string, any>) => [
      row.date,
      row.start_balance,
      row.end_balance,
      row.cash_outflows,
    ]);
    expect(february).toHaveLength(28);
    expect(february.filter(([, start, end]: string[]) => start !== end)).toEqual([
      ["2026-02-20", "$7.00", "$4.00", "$3.00"],
      ["2026-02-05", "$9.00", "$7.00", "$2.00"],
    ]);
    expect(february[0]).toEqual(["2026-02-28", "$4.00", "$4.00", "$0.00"]);
    expect(february.at(-1)).toEqual(["2026-02-01", "$9.00", "$9.00", "$0.00"]);
  });

  test("hostile filters are 422s; another family's rows are not there", async () => {
    expect((await api(user).get("/balances?account_id=not-a-uuid")).status).toBe(422);
    expect((await api(user).get("/balances?start_date=2026-02-30")).status).toBe(422);
    expect((await api(user).get("/balances?end_date=yesterday")).status).toBe(422);
    const theirs = await api(stranger).get(`/balances?account_id=${accountId}`);
    expect([theirs.status, theirs.body.balances]).toEqual([200, []]);
    const [row] = (await api(user).get(`/balances?account_id=${accountId}`)).body.balances;
    expect((await api(user).get(`/balances/${row.id}`)).body).toEqual(row);
    expect((await api(stranger).get(`/balances/${row.id}`)).status).toBe(404);
    expect((await api(stranger).get(`/valuations?account_id=${accountId}`)).body.valuations).toEqual([]);
  });

  test("a day's id is its account's and day's: the same after its row is rebuilt, and no other day's, account's or family's", async () => {
    const [newest] = (await api(user).get(`/balances?account_id=${accountId}`)).body.balances;
    const days = (list: Array<{ id: string; date: string }>) => list.map((row) => `${row.date} ${row.id}`);
    const before = days((await api(user).get(`/balances?account_id=${accountId}`)).body.balances);
    await app.runtime.sequelize.query("DELETE FROM ledger_days WHERE account_id = $1", { bind: [accountId] });
    await app.runtime.services.repositories.ledger.recompute(accountId, "forward", "-infinity");
    expect(days((await api(user).get(`/balances?account_id=${accountId}`)).body.balances)).toEqual(before);
    // Its first 96 bits are the account's; the last 32 name the day.
    expect(newest.id.slice(0, 28)).toBe(accountId.slice(0, 28));
    // Any calendar day from the opening anchor to the newest has its id; the day after the newest has none.
    const low = parseInt(accountId.slice(28), 16);
    const dayId = (day: number) => accountId.slice(0, 28) + ((day ^ low) >>> 0).toString(16).padStart(8, "0");
    const newestDay = (parseInt(newest.id.slice(28), 16) ^ low) >>> 0;
    expect(dayId(newestDay)).toBe(newest.id);
    const previous = await api(user).get(`/balances/${dayId(newestDay - 1)}`);
    expect([previous.status, previous.body.date]).toEqual([200, new Date((newestDay - 1) * 86_400_000).toISOString().slice(0, 10)]);
    const dayAfter = dayId(newestDay + 1);
    expect((await api(user).get(`/balances/${dayAfter}`)).status).toBe(404);
    const theirs = await createAccount(app.runtime.services, stranger, { balance: "1" });
    const [theirDay] = (await api(stranger).get(`/balances?account_id=${theirs.id}`)).body.balances;
    expect((await api(user).get(`/balances/${theirDay.id}`)).status).toBe(404);
    expect((await api(user).get("/balances/00000000-0000-0000-0000-000000000000")).status).toBe(404);
    expect((await api(user).get("/balances/ffffffff-ffff-ffff-ffff-ffffffffffff")).status).toBe(404);
  });

  test("an account's days go with the account", async () => {
    const doomed = await createAccount(app.runtime.services, user, { name: "Closed", balance: "3" });
    const rows = async () =>
      Number(
        (
          (await app.runtime.sequelize.query("SELECT count(*) AS n FROM ledger_days WHERE account_id = $1", {
            bind: [doomed.id],
          })) as [Array<{ n: string }>, unknown]
        )[0][0].n,
      );
    expect(await rows()).toBeGreaterThan(0);
    await graphqlClient(app, user.key).ok(`mutation($id: ID!) { deleteAccount(id: $id) { id } }`, { id: doomed.id });
    expect(await rows()).toBe(0);
  });

  test("GraphQL: an account's history and net worth by month, from the same rows", async () => {
    const gql = graphqlClient(app, user.key);
    const data = await gql.ok(
      `query($id: ID!) {
        account(id: $id) { balanceHistory(from: "2026-01-01", to: "2026-03-10", interval: MONTH) { date balance } }
        netWorthSeries(from: "2026-01-01", to: "2026-03-10", interval: MONTH) { date currency netWorth }
      }`,
      { id: accountId },
    );
    expect(data.account.balanceHistory).toEqual([
      { date: "2026-01-31", balance: "9" },
      { date: "2026-02-28", balance: "4" },
      { date: "2026-03-10", balance: "0" },
    ]);
    expect(
      data.netWorthSeries.filter((point: Record<string, any>) => point.currency === "USD").map((p: Record<string, any>) => p.netWorth),
    ).toEqual(["9", "4", "0"]);
  });
});

describe("valuation writes", () => {
  test("are audited in the write's transaction, naming the actor; a read-only key is refused", async () => {
    const user = await createUser(app.runtime.services);
    const account = await createAccount(app.runtime.services, user, { name: "Car", accountType: "vehicle", balance: "20000" });
    const refused = apiKeyClient(`${app.url}/api/v1`, user.readKey);
    expect((await refused.post("/valuations", { valuation: { account_id: account.id, date: "2026-01-01", amount: "1" } })).status).toBe(
      403,
    );
    const created = await api(user).post("/valuations", { valuation: { account_id: account.id, date: "2026-06-01", amount: "18500" } });
    expect(created.status).toBe(201);
    const events = (await app.runtime.services.audit.list({ eventTypes: ["valuation.created"] }, { first: 100 })).events.filter(
      (event) => event.resource?.id === created.body.id,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      user: { id: user.userId, email: user.email },
      action: "create",
      changes: { amount: { old: null, new: "18500" } },
    });
    const gql = graphqlClient(app, user.key);
    await gql.ok(`mutation($id: ID!) { deleteValuation(id: $id) { id } }`, { id: created.body.id });
    expect((await api(user).get(`/accounts/${account.id}`)).body.balance).toBe("$20,000.00");
    const [anchor] = (await api(user).get(`/valuations?account_id=${account.id}`)).body.valuations;
    const refusal = await gql.fail(`mutation($id: ID!) { deleteValuation(id: $id) { id } }`, { id: anchor.id });
    expect(refusal.extensions.code).toBe("VALIDATION_FAILED");
  });
});
