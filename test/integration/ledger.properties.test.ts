import fc from "fast-check";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { graphqlClient } from "../helpers/graphql";
import { apiKeyClient } from "../helpers/http";
import { allBalanceRows, cents, expectMatchesOracle } from "../helpers/ledger-oracle";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Random sequences of writes, with random dates that often collide, over a manual cash account, a
 * credit card (a liability), a house (valued, not moved by transactions), a loan, a bank-fed account
 * and a brokerage account (cash plus holdings, whose reported value changes on random days): after every step the accounts, the balance sheet and /balances equal the oracle's SQL.
 */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

const ACCOUNTS = ["checking", "card", "house", "loan", "fed", "brokerage"] as const;
type Slot = (typeof ACCOUNTS)[number];

const day = fc.integer({ min: 0, max: 40 }).map((offset) => new Date(Date.UTC(2026, 0, 1 + offset)).toISOString().slice(0, 10));
const amount = fc.integer({ min: -90_000, max: 90_000 }).filter((cents) => cents !== 0);
const slot = fc.constantFrom(...ACCOUNTS);
const pick = fc.nat({ max: 1000 });

const operation = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("createTransaction" as const), account: slot, date: day, cents: amount }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("updateTransaction" as const),
      pick,
      account: fc.option(slot, { nil: undefined }),
      date: fc.option(day, { nil: undefined }),
      cents: fc.option(amount, { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteTransaction" as const), pick }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("createValuation" as const), account: slot, date: day, cents: amount }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("updateValuation" as const), pick, date: day, cents: amount }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteValuation" as const), pick }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("transfer" as const),
      from: slot,
      to: slot,
      date: day,
      cents: fc.integer({ min: 1, max: 50_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("sync" as const), date: day, cents: amount }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("holdings" as const), date: day, cents: fc.integer({ min: 0, max: 900_000 }) }),
  },
);
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

const money = (cents: number) => (Math.abs(cents) / 100).toFixed(2);

class Family {
  readonly ids = {} as Record<Slot, string>;
  readonly transactions: string[] = [];
  private constructor(readonly user: TestUser) {}

  static async open(): Promise<Family> {
    const family = new Family(await createUser(app.runtime.services));
    const types: Record<Slot, string> = {
      checking: "depository",
      card: "credit_card",
      house: "property",
      loan: "loan",
      fed: "depository",
      brokerage: "investment",
    };
    for (const name of ACCOUNTS)
      family.ids[name] = (await createAccount(app.runtime.services, family.user, { name, accountType: types[name], balance: "1000" })).id;
    // The bank-fed account as a sync leaves it: anchored at the provider's balance.
    await family.sync("2026-01-20", 250_00);
    return family;
  }

  get api() {
    return apiKeyClient(`${app.url}/api/v1`, this.user.key);
  }

  /** What a bank sync does with a provider's balance, then its one recompute. */
  async sync(date: string, cents: number): Promise<void> {
    const { sequelize, services } = app.runtime;
    const [account] = await services.repositories.accounts.byIds(this.user.familyId, [this.ids.fed]);
    await sequelize.transaction(async (transaction) => {
      await services.ledger.setCurrentAnchor({ ...account!, familyId: this.user.familyId }, date, (cents / 100).toFixed(2), transaction);
      await services.ledger.recomputeWhole([this.ids.fed], transaction);
    });
  }

  /** A holdings report of the brokerage account on `date` (one security, replacing that day's), then the ledger's seam. */
  async holdings(date: string, cents: number): Promise<void> {
    const { sequelize, services } = app.runtime;
    await sequelize.transaction(async (transaction) => {
      await sequelize.query(
        `INSERT INTO securities (id, key, ticker, name, currency) VALUES (gen_random_uuid(), 'prop-fund', 'FUND', 'Fund', 'USD')
           ON CONFLICT (key) DO NOTHING`,
        { transaction },
      );
      await sequelize.query(
        `INSERT INTO holdings (id, family_id, account_id, security_id, date, quantity, price, value, currency)
         SELECT gen_random_uuid(), $1, $2, s.id, $3, 1, $4, $4, 'USD' FROM securities s WHERE s.key = 'prop-fund'
           ON CONFLICT (account_id, security_id, date) DO UPDATE SET value = EXCLUDED.value, price = EXCLUDED.price`,
        { bind: [this.user.familyId, this.ids.brokerage, date, (cents / 100).toFixed(2)], transaction },
      );
      await services.ledger.holdingsChanged(this.ids.brokerage, date, transaction);
    });
  }

  async valuationIds(): Promise<Array<{ id: string; kind: string }>> {
    return (await this.api.get("/valuations?per_page=100")).body.valuations;
  }

  async apply(op: Operation): Promise<void> {
    const nature = (cents: number) => (cents > 0 ? "expense" : "income");
    switch (op.kind) {
      case "createTransaction": {
        const body = { account_id: this.ids[op.account], date: op.date, amount: money(op.cents), nature: nature(op.cents), name: "Random" };
        const created = await this.api.post("/transactions", { transaction: body });
        expect(created.status).toBe(201);
        this.transactions.push(created.body.id);
        return;
      }
      case "updateTransaction": {
        if (this.transactions.length === 0) return;
        const id = this.transactions[op.pick % this.transactions.length];
        const body: Record<string, string> = {};
        if (op.account) body.account_id = this.ids[op.account];
        if (op.date) body.date = op.date;
        if (op.cents !== undefined) Object.assign(body, { amount: money(op.cents), nature: nature(op.cents) });
        expect((await this.api.patch(`/transactions/${id}`, { transaction: body })).status).toBe(200);
        return;
      }
      case "deleteTransaction": {
        if (this.transactions.length === 0) return;
        const [id] = this.transactions.splice(op.pick % this.transactions.length, 1);
        expect((await this.api.delete(`/transactions/${id}`)).status).toBe(200);
        return;
      }
      case "createValuation": {
        const body = { account_id: this.ids[op.account], date: op.date, amount: (op.cents / 100).toFixed(2) };
        expect((await this.api.post("/valuations", { valuation: body })).status).toBe(201);
        return;
      }
      case "updateValuation": {
        const valuations = await this.valuationIds();
        const { id } = valuations[op.pick % valuations.length];
        const body = { date: op.date, amount: (op.cents / 100).toFixed(2) };
        expect((await this.api.patch(`/valuations/${id}`, { valuation: body })).status).toBe(200);
        return;
      }
      case "deleteValuation": {
        const valuations = await this.valuationIds();
        const { id, kind } = valuations[op.pick % valuations.length];
        const response = await graphqlClient(app, this.user.key).raw(`mutation($id: ID!) { deleteValuation(id: $id) { id } }`, { id });
        if (kind === "reconciliation") expect(response.body.errors).toBeUndefined();
        else expect(response.body.errors[0].extensions.code).toBe("VALIDATION_FAILED");
        return;
      }
      case "transfer": {
        if (op.from === op.to) return;
        const input = { fromAccountId: this.ids[op.from], toAccountId: this.ids[op.to], date: op.date, amount: money(op.cents) };
        const response = await graphqlClient(app, this.user.key).raw(
          `mutation($input: TransferInput!) { createTransfer(input: $input) { outflow { id } inflow { id } } }`,
          { input },
        );
        expect(response.body.errors).toBeUndefined();
        this.transactions.push(response.body.data.createTransfer.outflow.id, response.body.data.createTransfer.inflow.id);
        return;
      }
      case "sync":
        return this.sync(op.date, op.cents);
      case "holdings":
        return this.holdings(op.date, op.cents);
    }
  }
}

test("after every write, in any order, the account, the balance sheet and /balances equal the SQL oracle", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 10 }), async (operations) => {
      const family = await Family.open();
      await expectMatchesOracle(app, family.user);
      for (const op of operations) {
        await family.apply(op);
        await expectMatchesOracle(app, family.user);
      }
      await expectAccountReadsMatch(family);
    }),
    { numRuns: 25, endOnFailure: true },
  );
}, 600_000);

/**
 * One account's reads derive only the days they need (derive.sql.ts): its /balances pages (small
 * pages, so a page often starts on an anchor or right after one, and its first start comes from the
 * day before the page) equal its rows of the family's list, every figure; its balanceHistory by day,
 * week and month equals the newest of those rows on or before each point.
 */
async function expectAccountReadsMatch(family: Family): Promise<void> {
  // From a little before the series below (the writes' days are in January and February 2026).
  const all = await allBalanceRows(app, family.user, "&start_date=2025-12-15");
  const client = apiKeyClient(`${app.url}/api/v1`, family.user.key);
  const gql = graphqlClient(app, family.user.key);
  for (const id of Object.values(family.ids)) {
    const own = all.filter((row) => row.account.id === id);
    const paged: Array<Record<string, any>> = [];
    for (let page = 1; ; page++) {
      const response = await client.get(`/balances?account_id=${id}&start_date=2025-12-15&per_page=7&page=${page}`);
      expect(response.status).toBe(200);
      expect(response.body.pagination.total_count).toBe(own.length);
      paged.push(...response.body.balances);
      if (page >= response.body.pagination.total_pages) break;
    }
    expect(paged).toEqual(own);
    // The account's newest day before the window: what a point before its rows in the window stands on.
    const [before] = (await client.get(`/balances?account_id=${id}&end_date=2025-12-14&per_page=1`)).body.balances;
    const onOrBefore = (date: string) => own.find((row) => row.date <= date) ?? (before && before.date <= date ? before : undefined);
    for (const interval of ["DAY", "WEEK", "MONTH"]) {
      const { account } = await gql.ok(
        `query($id: ID!, $interval: SeriesInterval!) { account(id: $id) { balanceHistory(from: "2025-12-20", to: "2026-02-15", interval: $interval) { date balance } } }`,
        { id, interval },
      );
      const expected = (account.balanceHistory as Array<{ date: string }>).map(({ date }) => {
        const newest = onOrBefore(date);
        return [date, newest ? newest.end_balance_cents : null];
      });
      expect(account.balanceHistory.map((point: { date: string; balance: string }) => [point.date, cents(point.balance)])).toEqual(
        expected,
      );
      const points = account.balanceHistory.length;
      const first = before?.date ?? own.at(-1)?.date ?? null;
      if (interval === "DAY")
        expect(points).toBe(first ? 58 - Math.max(0, (Date.parse(first) - Date.parse("2025-12-20")) / 86_400_000) : 0);
      // A week's point is its last day, a Sunday (weeks start on Monday); `to`, 2026-02-15, is one too.
      if (interval === "WEEK" && points > 0) {
        const dates = account.balanceHistory.map((point: { date: string }) => point.date);
        expect(dates.every((date: string) => new Date(`${date}T00:00:00Z`).getUTCDay() === 0)).toBe(true);
        expect(dates.at(-1)).toBe("2026-02-15");
        expect(dates.slice(1).every((date: string, i: number) => Date.parse(date) - Date.parse(dates[i]) === 7 * 86_400_000)).toBe(true);
      }
    }
  }
}
