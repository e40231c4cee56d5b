/**
 * "A page of 100 transactions with every nested object costs a constant number of SQL statements (a
 * test counts them and fails above 6), in GraphQL and in REST alike."
 *
 * The count covers the whole request as the database sees it. The budget is tighter than the issue's
 * 6, at 3: authenticate the key when its process does not remember it (see KEY_LOOKUP), read the page
 * (with its total), then one batched read of everything the page points at (accounts, transfer
 * counterparts included, categories, merchants and tags together).
 */
import { randomUUID } from "node:crypto";
import type { AccountRow } from "../../src/finance/accounts/account.repository";
import { TransactionModel, TransactionTagModel } from "../../src/finance/transactions/transaction.model";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

const BUDGET = 3;
const TRANSACTIONS = 120;
const TRANSFERS = 3;

/**
 * ApiKeyService.authenticate refreshes last_used_at at most once a minute, off the request's path
 * (not awaited, errors ignored). It is no part of what serving the page costs, and whether it shows up
 * depends on when the key was last used, so it is left out of the count.
 */
const LAST_USED_TOUCH = /UPDATE api_keys SET last_used_at/;

/**
 * The audit chain's sequencer links committed events right after commits and on a schedule, on the app's
 * own pool; its scheduled read can fall inside a counted request whenever there are events (finance writes
 * are audited, so the seed leaves some). Background work, no part of serving the page either.
 */
const CHAIN_SEQUENCER = /FROM audit_chain_pending\(/;

/**
 * An API key's owner is read once and remembered by the process for a few seconds (ApiKeyService), so
 * whether a request reads it depends on when the key was last read: counted apart, at most one.
 */
const KEY_LOOKUP = /FROM api_keys k JOIN users u/;

const TRANSACTION_GRAPHQL = `query($perPage: Int) {
  transactions(perPage: $perPage) {
    items {
      id date amount formattedAmount amountCents signedAmountCents currency name notes classification pending externalId source createdAt updatedAt
      account { id name accountType classification currency balance createdAt updatedAt }
      category { id parentId name classification color icon createdAt updatedAt }
      merchant { id name color logoUrl createdAt updatedAt }
      tags { id name color createdAt updatedAt }
      transfer { id amount formattedAmount currency otherAccount { id name accountType classification currency balance createdAt updatedAt } }
    }
    pagination { page perPage totalCount totalPages }
  }
}`;

let app: TestApp;
let user: TestUser;
beforeAll(async () => {
  app = await startTestApp();
  user = await createUser(app.runtime.services);
  await seed(user);
  // The seed's writes are audited; the chain links their events after commit, on the app's own pool. Linked
  // first, so none of those statements lands in a counted request.
  await app.runtime.services.audit.chainCommitted();
  // Warm up: the first use of the key schedules its last_used_at refresh; later requests skip it.
  expect((await rest.fetchPage(1)).status).toBe(200);
});
afterAll(() => app.stop());

/**
 * 120 transactions over 7 accounts, 13 categories, 17 merchants and 11 tags (some rows without a
 * category, a merchant or tags), plus 3 transfers dated last. Even a page of 10 holds every kind of
 * nested object, yet far fewer distinct ones than a page of 100: a loader that queried per object
 * instead of per page would make the two pages cost differently.
 */
async function seed(owner: TestUser): Promise<void> {
  const { services } = app.runtime;
  const named = (kind: string, count: number) => Array.from({ length: count }, (_, i) => `${kind} ${i + 1}`);
  const accounts: AccountRow[] = [];
  for (const name of named("Account", 7)) accounts.push(await createAccount(services, owner, { name }));
  const categories = await Promise.all(named("Category", 13).map((name) => services.categories.create(owner.actor, { name })));
  const merchants = await Promise.all(named("Merchant", 17).map((name) => services.merchants.create(owner.actor, { name })));
  const tags = await Promise.all(named("Tag", 11).map((name) => services.tags.create(owner.actor, { name })));

  const rows = Array.from({ length: TRANSACTIONS }, (_, i) => ({
    id: randomUUID(),
    familyId: owner.familyId,
    accountId: accounts[i % accounts.length].id,
    date: new Date(Date.UTC(2024, 11, 30) - i * 86_400_000).toISOString().slice(0, 10),
    amount: String(i % 4 === 0 ? -(100 + i) : 10 + i),
    currency: "USD",
    name: `Transaction ${i}`,
    categoryId: i % 6 === 5 ? null : categories[i % categories.length].id,
    merchantId: i % 7 === 6 ? null : merchants[i % merchants.length].id,
  }));
  await TransactionModel.bulkCreate(rows);
  // No tag, one tag or two tags, in turn.
  const tagged = rows.flatMap((row, i) =>
    Array.from({ length: i % 3 }, (_, k) => ({ transactionId: row.id, tagId: tags[(i + k) % tags.length].id })),
  );
  await TransactionTagModel.bulkCreate(tagged);

  for (let i = 0; i < TRANSFERS; i += 1) {
    await services.transactions.createTransfer(owner.actor, {
      fromAccountId: accounts[i].id,
      toAccountId: accounts[i + 1].id,
      date: "2024-12-31",
      amount: "250",
    });
  }
}

/** The statements the database saw while `request` ran, with Sequelize's "Executing (…):" prefix removed. */
async function statementsDuring(
  request: () => Promise<HttpResponse>,
): Promise<{ response: HttpResponse; statements: string[]; keyLookups: number }> {
  app.statements.length = 0;
  const response = await request();
  const counted = app.statements.filter((sql) => !LAST_USED_TOUCH.test(sql) && !CHAIN_SEQUENCER.test(sql));
  const statements = counted.filter((sql) => !KEY_LOOKUP.test(sql)).map((sql) => sql.replace(/^Executing \([^)]*\): /, ""));
  return { response, statements, keyLookups: counted.length - statements.length };
}

/** The budget less the key lookup, which is at most one and counted apart (KEY_LOOKUP). */
function expectWithinBudget(statements: string[], keyLookups: number): void {
  expect(keyLookups).toBeLessThanOrEqual(1);
  if (statements.length <= BUDGET - 1) return;
  const listing = statements.map((sql, i) => `${i + 1}. ${sql.replace(/\s+/g, " ")}`).join("\n");
  throw new Error(`${statements.length} SQL statements besides the key lookup, over the budget of ${BUDGET - 1}:\n${listing}`);
}

type Transport = { name: string; fetchPage: (perPage: number) => Promise<HttpResponse>; itemsOf: (response: HttpResponse) => any[] };

const rest: Transport = {
  name: "REST GET /api/v1/transactions",
  fetchPage: (perPage) => apiKeyClient(`${app.url}/api/v1`, user.key).get(`/transactions?per_page=${perPage}`),
  itemsOf: (response) => response.body.transactions,
};
const graphql: Transport = {
  name: "GraphQL transactions",
  fetchPage: (perPage) => apiKeyClient(app.url, user.key).graphql(TRANSACTION_GRAPHQL, { perPage }),
  itemsOf: (response) => response.body.data.transactions.items,
};

describe.each([rest, graphql])("$name", ({ fetchPage, itemsOf }) => {
  test(`a page of 100 with every nested object costs at most ${BUDGET} statements`, async () => {
    const { response, statements, keyLookups } = await statementsDuring(() => fetchPage(100));

    expect(response.status).toBe(200);
    const items = itemsOf(response);
    expect(items).toHaveLength(100);
    // The page really does hold every kind of nested object, so every loader had work to do.
    expect(items.filter((t) => t.transfer !== null)).toHaveLength(TRANSFERS * 2);
    expect(items.some((t) => (t.transfer?.other_account ?? t.transfer?.otherAccount)?.id)).toBe(true);
    expect(items.every((t) => t.account?.id)).toBe(true);
    expect(items.some((t) => t.category?.id) && items.some((t) => t.category === null)).toBe(true);
    expect(items.some((t) => t.merchant?.id) && items.some((t) => t.merchant === null)).toBe(true);
    expect(items.some((t) => t.tags.length === 2) && items.some((t) => t.tags.length === 0)).toBe(true);

    expectWithinBudget(statements, keyLookups);
  });

  test("the count does not grow with the page: 10 and 100 cost the same", async () => {
    const small = await statementsDuring(() => fetchPage(10));
    const large = await statementsDuring(() => fetchPage(100));

    expect(itemsOf(small.response)).toHaveLength(10);
    expect(itemsOf(large.response)).toHaveLength(100);
    expect(small.statements.length).toBe(large.statements.length);
  });
});

test("REST and GraphQL cost the same", async () => {
  const viaRest = await statementsDuring(() => rest.fetchPage(100));
  const viaGraphql = await statementsDuring(() => graphql.fetchPage(100));
  expect(viaRest.statements.length).toBe(viaGraphql.statements.length);
});
