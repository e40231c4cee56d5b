/**
 * Every event type of the catalogue (interface spec §6, 24 types, and audit streaming's 10) comes from a real action of the
 * service: the walk below only makes HTTP requests, as clients and browsers do, against a real IdP
 * on loopback, and checks after each step which event types that step produced. Nothing here writes
 * to the audit log; the direct SQL writes age a session and an API key, standing in for the passing of time.
 */
import { generateSync } from "otplib";
import { eventually } from "../helpers/eventually";
import { AUDIT_EVENT_TYPES, SPEC_EVENT_TYPES, type AuditEventType } from "../../src/audit/log/audit.catalogue";
import { QueueName } from "../../workers/queues";
import { startIdp, type TestIdp } from "../fakes/oidc-idp";
import { WebhookReceiver } from "../fakes/webhook-receiver";
import { Browser } from "../helpers/browser";
import { client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

// A long walk (a few dozen steps, password hashing among them): more than the default 30 s on a busy machine.
jest.setTimeout(120_000);

let app: TestApp;
let acme: TestIdp;
let globex: TestIdp;
const PASSWORD = "a walk through every event";
const seen = new Set<string>();
const produced = new Map<AuditEventType, string>();
/** Every event the walk produced, for the check of who asked. */
const walked: Array<Awaited<ReturnType<typeof newEvents>>[number]> = [];

beforeAll(async () => {
  app = await startTestApp({
    roles: { workers: true },
    env: {
      ALLOW_INSECURE_UPSTREAMS: "true",
      RATE_LIMIT_REQUESTS: "0",
      // Audit streaming, IdPs and bank fakes on loopback; one quick stream retry, so that exhausting them is part of the walk.
      OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
      STREAM_POLL_MS: "100",
      STREAM_RETRY_SCHEDULE: "50ms",
    },
  });
  await app.runtime.services.users.create({ email: "root@walk.test", role: "admin", password: PASSWORD });
  acme = await startIdp({ name: "acme" });
  globex = await startIdp({ name: "globex" });
  for (const [idp, slug] of [
    [acme, "acme"],
    [globex, "globex"],
  ] as const) {
    idp.addClient({ client_id: "fg", client_secret: `${slug}-secret`, redirect_uris: [`${app.url}/auth/sso/${slug}/callback`] });
  }
  acme.setUser("walker", { email: "walker@walk.test", email_verified: true, name: "Walker", groups: ["auditors"] });
  globex.setUser("walker-g", { email: "walker@globex.test", email_verified: true });
  // Events recorded while setting up (the admin's user.created) are not the walk's.
  for (const event of await newEvents()) seen.add(event.id);
}, 60_000);

afterAll(async () => {
  await Promise.all([acme?.stop(), globex?.stop()]);
  await app?.stop();
});

async function newEvents() {
  const { events } = await app.runtime.services.audit.list({}, { first: 100 });
  return events.filter((event) => !seen.has(event.id));
}

/** Runs one step and checks that it produced (at least) the expected event types, each from a request. */
async function step(label: string, expected: AuditEventType[], action: () => Promise<unknown>): Promise<void> {
  await action();
  const events = await newEvents();
  for (const event of events) {
    seen.add(event.id);
    walked.push(event);
    expect(event.requestId).toEqual(expect.any(String));
    if (!produced.has(event.eventType)) produced.set(event.eventType, label);
  }
  expect({ label, types: [...new Set(events.map((event) => event.eventType))].sort() }).toEqual({
    label,
    types: expect.arrayContaining(expected),
  });
}

test("a walk through the service produces every event type of the catalogue", async () => {
  const http = client(app.url);
  let tokens: { access_token: string; refresh_token: string } = { access_token: "", refresh_token: "" };
  const admin = () => client(app.url, { authorization: `Bearer ${tokens.access_token}` });
  const gql = async (query: string, variables?: Record<string, unknown>) => {
    const response = await admin().graphql(query, variables);
    expect(response.body.errors).toBeUndefined();
    return response.body.data;
  };

  await step("local login", ["auth.login.success", "auth.token.issued"], async () => {
    tokens = (await http.post("/auth/login", { email: "root@walk.test", password: PASSWORD })).body;
  });
  await step("wrong password", ["auth.login.failed"], () => http.post("/auth/login", { email: "root@walk.test", password: "wrong" }));
  await step("refresh", ["auth.token.refreshed"], async () => {
    tokens = (await http.post("/oauth/token", { grant_type: "refresh_token", refresh_token: tokens.refresh_token })).body;
  });
  await step("revoke an access token", ["auth.token.revoked"], async () => {
    const spare = (await http.post("/auth/login", { email: "root@walk.test", password: PASSWORD })).body;
    await http.post("/oauth/revoke", { token: spare.access_token });
  });
  await step("a session outlives its lifetime", ["auth.session.expired"], async () => {
    const spare = (await http.post("/auth/login", { email: "root@walk.test", password: PASSWORD })).body;
    const [session] = (await app.runtime.services.audit.list({ eventTypes: ["auth.login.success"] }, { first: 1 })).events;
    await app.runtime.sequelize.query(`UPDATE auth_sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, {
      bind: [session.sessionId],
    });
    expect((await client(app.url, { authorization: `Bearer ${spare.access_token}` }).graphql(`{ me { id } }`)).status).toBe(401);
  });
  await step("logout", ["auth.logout"], async () => {
    const spare = (await http.post("/auth/login", { email: "root@walk.test", password: PASSWORD })).body;
    await client(app.url, { authorization: `Bearer ${spare.access_token}` }).post("/auth/logout");
  });
  await step("five wrong passwords lock an account; an administrator unlocks it", ["auth.login.failed", "user.unlocked"], async () => {
    for (let attempt = 0; attempt < 5; attempt++) await http.post("/auth/login", { email: "root@walk.test", password: "wrong" });
    const { me } = await gql(`{ me { id } }`);
    await gql(`mutation ($id: ID!) { unlockUser(id: $id) { id } }`, { id: me.id });
  });
  let apiKeyId = "";
  await step("create an API key", ["auth.api_key.created"], async () => {
    apiKeyId = (await gql(`mutation { createApiKey(scope: "read", name: "walk") { apiKey { id } } }`)).createApiKey.apiKey.id;
  });
  await step("revoke it", ["auth.api_key.revoked"], () => gql(`mutation ($id: ID!) { revokeApiKey(id: $id) { id } }`, { id: apiKeyId }));
  await step("a key presented after its expiry", ["auth.api_key.expired"], async () => {
    const expiresAt = new Date(Date.now() + 60_000).toISOString();
    const { createApiKey } = await gql(
      `mutation ($at: DateTimeISO) { createApiKey(scope: "read", name: "walk expiring", expiresAt: $at) { plaintext apiKey { id } } }`,
      { at: expiresAt },
    );
    await app.runtime.sequelize.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, {
      bind: [createApiKey.apiKey.id],
    });
    expect((await client(app.url, { "x-api-key": createApiKey.plaintext }).graphql(`{ me { id } }`)).status).toBe(401);
  });

  let acmeId = "";
  let globexId = "";
  const create = async (slug: string, issuer: string, extra: Record<string, unknown>) =>
    (
      await gql(`mutation ($input: SsoProviderInput!) { createSsoProvider(input: $input) { id } }`, {
        input: {
          name: slug,
          slug,
          issuer,
          clientId: "fg",
          clientSecret: `${slug}-secret`,
          scopes: ["openid", "email", "profile", "groups"],
          ...extra,
        },
      })
    ).createSsoProvider.id;
  await step("create providers", ["provider.created"], async () => {
    acmeId = await create("acme", acme.issuer, { jitProvisioning: true, roleMappings: [{ group: "auditors", role: "auditor" }] });
    globexId = await create("globex", globex.issuer, {});
  });
  await step("update a provider", ["provider.updated"], () =>
    gql(`mutation ($id: ID!) { updateSsoProvider(id: $id, input: { name: "Acme IdP" }) { id } }`, { id: acmeId }),
  );
  await step("disable a provider", ["provider.disabled"], () =>
    gql(`mutation ($id: ID!) { disableSsoProvider(id: $id) { id } }`, { id: acmeId }),
  );
  await step("enable a provider", ["provider.enabled"], () =>
    gql(`mutation ($id: ID!) { enableSsoProvider(id: $id) { id } }`, { id: acmeId }),
  );
  await step("test a provider", ["provider.test"], () => gql(`mutation ($id: ID!) { testSsoProvider(id: $id) { ok } }`, { id: acmeId }));

  const browser = new Browser();
  let walker: { id: string; role: string } = { id: "", role: "" };
  await step("first SSO sign-in", ["user.created", "account.connected", "auth.login.success"], async () => {
    walker = JSON.parse((await browser.get(`${app.url}/auth/sso/acme/start`)).text).user;
  });
  await step("SSO sign-in after the IdP's groups changed", ["user.roles.synced"], async () => {
    acme.setUser("walker", { email: "walker@walk.test", email_verified: true, name: "Walker", groups: [] });
    expect(JSON.parse((await browser.get(`${app.url}/auth/sso/acme/start`)).text).user.role).toBe("member");
  });
  await step("link a second identity", ["account.connected", "account.linked"], () => browser.post(`${app.url}/auth/sso/globex/link`, {}));
  await step("unlink it", ["account.disconnected", "account.unlinked"], async () => {
    const cookie = browser.cookieHeader(app.url);
    const own = client(app.url, { cookie, origin: app.url });
    const accounts = (await own.graphql(`{ connectedAccounts { id providerSlug } }`)).body.data.connectedAccounts;
    const globexAccount = accounts.find((account: { providerSlug: string }) => account.providerSlug === "globex");
    await own.graphql(`mutation ($id: ID!) { disconnectConnectedAccount(id: $id) { id } }`, { id: globexAccount.id });
  });

  await step("update a user's profile", ["user.updated"], () =>
    gql(`mutation ($id: ID!) { updateUser(id: $id, input: { name: "Walker Two" }) { id } }`, { id: walker.id }),
  );
  await step("set a user's role", ["user.roles.updated"], () =>
    gql(`mutation ($id: ID!) { setUserRole(id: $id, role: "auditor") { id } }`, { id: walker.id }),
  );
  await step("suspend a user", ["user.suspended"], () =>
    gql(`mutation ($id: ID!) { suspendUser(id: $id, reason: "walk") { id } }`, { id: walker.id }),
  );
  await step("reactivate a user", ["user.reactivated"], () =>
    gql(`mutation ($id: ID!) { reactivateUser(id: $id) { id } }`, { id: walker.id }),
  );
  await step("delete a user", ["user.deleted"], () =>
    gql(`mutation ($id: ID!) { deleteUser(id: $id) { familyDataRemoved } }`, { id: walker.id }),
  );
  await step("delete a provider", ["provider.deleted"], () =>
    gql(`mutation ($id: ID!) { deleteSsoProvider(id: $id) { id } }`, { id: globexId }),
  );

  const receiver = new WebhookReceiver([]);
  await receiver.start();
  try {
    let hookId = "";
    const hook = (mutation: string) => gql(`mutation ($id: ID!) { ${mutation} }`, { id: hookId });
    const health = async () =>
      (await gql(`query ($id: ID!) { streamDestination(id: $id) { enabled health { failing } } }`, { id: hookId })).streamDestination;
    await step("add a webhook", ["stream.destination.created"], async () => {
      const created = await gql(
        `mutation ($input: StreamDestinationInput!) { createStreamDestination(input: $input) { secret destination { id } } }`,
        {
          input: { kind: "webhook", name: "Walk", url: receiver.url, eventTypes: ["provider.*"] },
        },
      );
      hookId = created.createStreamDestination.destination.id;
      receiver.trust([created.createStreamDestination.secret]);
    });
    await step("change a webhook", ["stream.destination.updated"], () =>
      hook(`updateStreamDestination(id: $id, input: { name: "Walk 2" }) { id }`),
    );
    await step("rotate its secret", ["stream.destination.secret_rotated"], () => hook(`rotateStreamWebhookSecret(id: $id) { secret }`));
    await step("send a test event", ["stream.destination.tested"], () => hook(`testStreamDestination(id: $id) { ok }`));
    await step("pause it", ["stream.destination.paused"], () => hook(`pauseStreamDestination(id: $id) { id }`));
    await step("resume it", ["stream.destination.resumed"], () => hook(`resumeStreamDestination(id: $id) { id }`));
    await step("replay from the start", ["stream.destination.replayed"], () =>
      hook(`replayStreamDestination(id: $id, fromSequence: "1") { id }`),
    );
    await step("its receiver fails until the retries run out", ["stream.destination.failing"], async () => {
      receiver.failNext({ status: 503, times: 100 });
      await gql(`mutation ($id: ID!) { disableSsoProvider(id: $id) { id } }`, { id: acmeId });
      await eventually(async () => (await health()).health.failing, { what: "the webhook failing" });
    });
    await step("its receiver answers 410 Gone", ["stream.destination.disabled", "stream.destination.resumed"], async () => {
      receiver.clearFaults();
      receiver.failNext({ status: 410, times: 1 });
      await hook(`resumeStreamDestination(id: $id) { id }`);
      await eventually(async () => !(await health()).enabled, { what: "the webhook disabled" });
    });
    await step("delete it", ["stream.destination.deleted"], () => hook(`deleteStreamDestination(id: $id) { id }`));
    let channelId = "";
    let ruleId = "";
    await step("add an alert channel", ["alert.channel.created"], async () => {
      const created = await gql(`mutation ($input: AlertChannelInput!) { createAlertChannel(input: $input) { channel { id } } }`, {
        input: { kind: "webhook", name: "Walk alerts", settings: [{ name: "url", value: receiver.url }] },
      });
      channelId = created.createAlertChannel.channel.id;
    });
    await step("change it", ["alert.channel.updated"], () =>
      gql(`mutation ($id: ID!) { updateAlertChannel(id: $id, input: { name: "Walk alerts 2" }) { id } }`, { id: channelId }),
    );
    await step("send it a test alert", ["alert.channel.tested"], () =>
      gql(`mutation ($id: ID!) { testAlertChannel(id: $id) { ok } }`, { id: channelId }),
    );
    await step("enable an alert preset", ["alert.rule.created"], async () => {
      ruleId = (await gql(`mutation { enableAlertPreset(preset: "provider_change") { id } }`)).enableAlertPreset.id;
    });
    await step("change the rule", ["alert.rule.updated"], () =>
      gql(`mutation ($id: ID!) { updateAlertRule(id: $id, input: { threshold: 2 }) { id } }`, { id: ruleId }),
    );
    await step("delete the rule", ["alert.rule.deleted"], () =>
      gql(`mutation ($id: ID!) { deleteAlertRule(id: $id) { id } }`, { id: ruleId }),
    );
    await step("delete the channel", ["alert.channel.deleted"], () =>
      gql(`mutation ($id: ID!) { deleteAlertChannel(id: $id) { id } }`, { id: channelId }),
    );
  } finally {
    await receiver.stop();
  }

  let valuationId = "";
  await step("value a house", ["valuation.created"], async () => {
    const { createAccount } = await gql(`mutation { createAccount(input: { name: "Walk house", accountType: "property" }) { id } }`);
    const input = { accountId: createAccount.id, amount: "350000.00", date: "2026-01-15" };
    valuationId = (await gql(`mutation ($input: ValuationInput!) { createValuation(input: $input) { valuation { id } } }`, { input }))
      .createValuation.valuation.id;
  });
  await step("revalue it", ["valuation.updated"], () =>
    gql(`mutation ($id: ID!) { updateValuation(id: $id, input: { amount: "360000.00", date: "2026-01-15" }) { id } }`, { id: valuationId }),
  );
  await step("delete the valuation", ["valuation.deleted"], () =>
    gql(`mutation ($id: ID!) { deleteValuation(id: $id) { id } }`, { id: valuationId }),
  );
  let tradeId = "";
  await step("buy shares on a brokerage tracked by hand", ["trade.created"], async () => {
    const { createAccount } = await gql(`mutation { createAccount(input: { name: "Walk brokerage", accountType: "investment" }) { id } }`);
    const input = { accountId: createAccount.id, type: "buy", ticker: "VTI", qty: "3", price: "250.00", date: "2026-01-15" };
    tradeId = (await gql(`mutation ($input: TradeInput!) { createTrade(input: $input) { id } }`, { input })).createTrade.id;
  });
  await step("correct the trade's price", ["trade.updated"], () =>
    gql(`mutation ($id: ID!) { updateTrade(id: $id, input: { price: "251.00" }) { id } }`, { id: tradeId }),
  );
  await step("price the shares, for every family holding them", ["security_prices.recorded"], () =>
    gql(
      `mutation { recordSecurityPrices(prices: [{ ticker: "VTI", date: "2026-01-20", price: "255.00", currency: "USD" }]) { changedCount } }`,
    ),
  );
  await step("delete the trade", ["trade.deleted"], () => gql(`mutation ($id: ID!) { deleteTrade(id: $id) { id } }`, { id: tradeId }));
  const ids: Record<string, string> = {};
  await step("open a checking account", ["finance_account.created"], async () => {
    ids.account = (
      await gql(`mutation { createAccount(input: { name: "Walk checking", accountType: "depository", balance: "100" }) { id } }`)
    ).createAccount.id;
  });
  await step("rename it", ["finance_account.updated"], () =>
    gql(`mutation ($id: ID!) { updateAccount(id: $id, input: { name: "Walk current" }) { id } }`, { id: ids.account }),
  );
  await step("add a category, a merchant and a tag", ["category.created", "merchant.created", "tag.created"], async () => {
    ids.category = (await gql(`mutation { createCategory(input: { name: "Walk food" }) { id } }`)).createCategory.id;
    ids.merchant = (await gql(`mutation { createMerchant(input: { name: "Walk grocer" }) { id } }`)).createMerchant.id;
    ids.tag = (await gql(`mutation { createTag(input: { name: "walk" }) { id } }`)).createTag.id;
  });
  await step("change them", ["category.updated", "merchant.updated", "tag.updated"], async () => {
    await gql(`mutation ($id: ID!) { updateCategory(id: $id, input: { color: "#112233" }) { id } }`, { id: ids.category });
    await gql(`mutation ($id: ID!) { updateMerchant(id: $id, input: { name: "Walk greengrocer" }) { id } }`, { id: ids.merchant });
    await gql(`mutation ($id: ID!) { updateTag(id: $id, input: { color: "#445566" }) { id } }`, { id: ids.tag });
  });
  await step("enter a transaction", ["transaction.created"], async () => {
    const input = { accountId: ids.account, date: "2026-01-15", amount: "12.50", name: "Walk groceries", tagIds: [ids.tag] };
    ids.transaction = (
      await gql(`mutation ($input: TransactionInput!) { createTransaction(input: $input) { transaction { id } } }`, { input })
    ).createTransaction.transaction.id;
  });
  await step("categorise it", ["transaction.updated"], () =>
    gql(`mutation ($id: ID!, $input: TransactionInput!) { updateTransaction(id: $id, input: $input) { id } }`, {
      id: ids.transaction,
      input: { categoryId: ids.category, merchantId: ids.merchant },
    }),
  );
  await step("delete it", ["transaction.deleted"], () =>
    gql(`mutation ($id: ID!) { deleteTransaction(id: $id) { id } }`, { id: ids.transaction }),
  );
  await step("move money to savings", ["transfer.created"], async () => {
    const { createAccount } = await gql(`mutation { createAccount(input: { name: "Walk savings", accountType: "depository" }) { id } }`);
    const input = { fromAccountId: ids.account, toAccountId: createAccount.id, date: "2026-01-16", amount: "40" };
    await gql(`mutation ($input: TransferInput!) { createTransfer(input: $input) { id } }`, { input });
  });
  await step("delete the category, the merchant and the tag", ["category.deleted", "merchant.deleted", "tag.deleted"], async () => {
    await gql(`mutation ($id: ID!) { deleteCategory(id: $id) { id } }`, { id: ids.category });
    await gql(`mutation ($id: ID!) { deleteMerchant(id: $id) { id } }`, { id: ids.merchant });
    await gql(`mutation ($id: ID!) { deleteTag(id: $id) { id } }`, { id: ids.tag });
  });
  await step("close the account", ["finance_account.deleted"], () =>
    gql(`mutation ($id: ID!) { deleteAccount(id: $id) { id } }`, { id: ids.account }),
  );
  let rateId = "";
  await step("enter a euro rate", ["exchange_rate.set"], async () => {
    const input = { fromCurrency: "EUR", toCurrency: "USD", date: "2026-01-15", rate: "1.0856" };
    rateId = (await gql(`mutation ($input: ExchangeRateInput!) { setExchangeRate(input: $input) { exchangeRate { id } } }`, { input }))
      .setExchangeRate.exchangeRate.id;
  });
  await step("delete the rate", ["exchange_rate.deleted"], () =>
    gql(`mutation ($id: ID!) { deleteExchangeRate(id: $id) { id } }`, { id: rateId }),
  );

  let budgetId = "";
  await step("set a month's budget", ["budget.updated"], async () => {
    budgetId = (await gql(`mutation { setBudget(input: { startDate: "2026-01-01", budgetedSpending: "3000" }) { id } }`)).setBudget.id;
  });
  let planRuleId = "";
  await step("add a categorisation rule", ["rule.created"], async () => {
    const input = {
      name: "Walk rule",
      conditions: [{ conditionType: "transaction_amount", operator: ">", value: "1000000" }],
      actions: [{ actionType: "set_transaction_name", value: "Big" }],
    };
    planRuleId = (await gql(`mutation ($input: RuleInput!) { createRule(input: $input) { id } }`, { input })).createRule.id;
  });
  await step("change it", ["rule.updated"], () =>
    gql(`mutation ($id: ID!) { updateRule(id: $id, input: { active: false }) { id } }`, { id: planRuleId }),
  );
  await step("apply it", ["rule.applied"], () => gql(`mutation ($id: ID!) { applyRule(id: $id) { id } }`, { id: planRuleId }));
  await step("delete it", ["rule.deleted"], () => gql(`mutation ($id: ID!) { deleteRule(id: $id) { id } }`, { id: planRuleId }));
  let recurringId = "";
  await step("enter a recurring bill", ["recurring_transaction.created"], async () => {
    const input = {
      name: "Walk bill",
      amount: "10",
      expectedDayOfMonth: 3,
      lastOccurrenceDate: "2026-01-03",
      nextExpectedDate: "2026-02-03",
    };
    recurringId = (
      await gql(`mutation ($input: RecurringTransactionInput!) { createRecurringTransaction(input: $input) { id } }`, { input })
    ).createRecurringTransaction.id;
  });
  await step("pause it", ["recurring_transaction.updated"], () =>
    gql(`mutation ($id: ID!) { updateRecurringTransaction(id: $id, input: { status: "inactive" }) { id } }`, { id: recurringId }),
  );
  await step("delete it", ["recurring_transaction.deleted"], () =>
    gql(`mutation ($id: ID!) { deleteRecurringTransaction(id: $id) { id } }`, { id: recurringId }),
  );
  await step("detect recurring bills", ["recurring_transaction.detected"], () => gql(`mutation { detectRecurringTransactions }`));
  expect(budgetId).not.toBe("");
  await step("import a bank file and publish it", ["import.created", "import.published"], async () => {
    const { createAccount } = await gql(`mutation { createAccount(input: { name: "Walk imports", accountType: "depository" }) { id } }`);
    const input = { rawFileContent: "date,name,amount\n2026-01-20,Bakery,-3.20\n", accountId: createAccount.id };
    await gql(`mutation ($input: ImportInput!) { createImport(input: $input, publish: true) { id } }`, { input });
  });
  let familyExportId = "";
  await step("export the family's data; a worker writes the zip", ["family_export.created", "family_export.completed"], async () => {
    familyExportId = (await gql(`mutation { createFamilyExport { id } }`)).createFamilyExport.id;
    await eventually(
      async () =>
        (await gql(`query ($id: ID!) { familyExport(id: $id) { status } }`, { id: familyExportId })).familyExport.status === "completed",
      { what: "the family export written by the worker" },
    );
  });
  await step("download it", ["family_export.downloaded"], async () => {
    const { url } = (await gql(`mutation ($id: ID!) { createFamilyExportDownloadUrl(id: $id) { url } }`, { id: familyExportId }))
      .createFamilyExportDownloadUrl;
    expect((await admin().get(url)).status).toBe(200);
  });
  await step("reset the family's financial data", ["family.reset"], () =>
    gql(`mutation { resetFamilyData(confirm: true) { removed { table count } } }`),
  );

  // Two-factor sign-in last: from here on the administrator's password alone no longer signs in.
  const totp = (secret: string, offsetSteps: number) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });
  let secret = "";
  let recoveryCodes: string[] = [];
  await step("turn on two-factor sign-in", ["auth.mfa.enrolled"], async () => {
    secret = (await gql(`mutation { beginTwoFactorEnrolment { secret } }`)).beginTwoFactorEnrolment.secret;
    recoveryCodes = (await gql(`mutation ($code: String!) { confirmTwoFactorEnrolment(code: $code) }`, { code: totp(secret, 0) }))
      .confirmTwoFactorEnrolment;
  });
  await step("sign in with a code", ["auth.mfa.verified", "auth.login.success"], async () => {
    const login = await http.post("/api/v1/auth/login", { email: "root@walk.test", password: PASSWORD, otp_code: totp(secret, 1) });
    expect(login.status).toBe(200);
  });
  await step("sign in with a recovery code", ["auth.mfa.recovery_code_used"], async () => {
    const login = await http.post("/api/v1/auth/login", { email: "root@walk.test", password: PASSWORD, otp_code: recoveryCodes[0] });
    expect(login.status).toBe(200);
  });
  await step("an administrator resets it", ["auth.mfa.reset"], async () => {
    const { me } = await gql(`{ me { id } }`);
    await gql(`mutation ($id: ID!) { resetTwoFactor(userId: $id) }`, { id: me.id });
  });

  // Every type but the audit exports' and reports', and the alert storm limits' (recorded by the worker's evaluator, outside
  // any request, after thousands of events): their own tests produce those (alerts.storm.test.ts for the limits).
  // A family export that fails (its file cannot be written) and a restore (a CLI command, outside any request) are
  // produced by family-exports.test.ts.
  const OWN_TESTS = new Set<string>(["alert.rule.limited", "alert.channel.limited", "family_export.failed", "family.restored"]);
  const missing = AUDIT_EVENT_TYPES.filter((type) => !type.startsWith("audit.") && !OWN_TESTS.has(type) && !produced.has(type));
  expect(missing).toEqual([]);
  expect(SPEC_EVENT_TYPES).toHaveLength(24);

  // Who asked: every administrative action of the audit product (SSO providers, users, streams, alerts) names the
  // administrator and the session their bearer token belongs to.
  const [login] = walked.filter((event) => event.eventType === "auth.login.success" && event.user?.email === "root@walk.test");
  expect(login.sessionId).toEqual(expect.any(String));
  const administrative = walked.filter(
    (event) =>
      ADMINISTRATIVE.test(event.eventType) &&
      // Recorded by the delivery worker about a receiver, not on anyone's behalf.
      !["stream.destination.failing", "stream.destination.disabled"].includes(event.eventType),
  );
  expect(new Set(administrative.map((event) => event.eventType)).size).toBeGreaterThanOrEqual(25);
  for (const event of administrative)
    expect({ type: event.eventType, user: event.user?.email, session: event.sessionId }).toEqual({
      type: event.eventType,
      user: "root@walk.test",
      session: login.sessionId,
    });
});

/** The audit product's administrative event types. */
const ADMINISTRATIVE =
  /^(provider\.|user\.(updated|roles\.updated|suspended|reactivated|deleted|unlocked)$|stream\.destination\.|alert\.(rule|channel)\.(created|updated|deleted|tested)$|auth\.api_key\.(created|revoked)$|auth\.mfa\.reset$|family\.reset$)/;

test("with an API key, every action of the audit product names the user and the key (`api_key:<id>`) as the credential", async () => {
  const services = app.runtime.services;
  const owner = await services.users.create({ email: "keyholder@walk.test", role: "admin", password: PASSWORD });
  const { plaintext } = await services.apiKeys.create(owner.id, { scope: "read_write", name: "walk automation" });
  const keyActor = await services.apiKeys.authenticate(plaintext);
  const api = client(app.url, { "x-api-key": plaintext });
  const gql = async (query: string, variables?: Record<string, unknown>) => {
    const response = await api.graphql(query, variables);
    expect(response.body.errors).toBeUndefined();
    return response.body.data;
  };
  const started = new Date(Date.now() - 1000).toISOString();
  // Events about the owner from the setup above (made through the services, outside any request) are not the walk's.
  const setUp = new Set((await services.audit.list({ userIds: [owner.id] }, { first: 100 })).events.map((event) => event.id));
  const exportId = (
    await gql(`mutation { createAuditExport(input: { filter: { from: "2024-01-01", to: "2024-01-31" }, format: JSON }) { id } }`)
  ).createAuditExport.id;
  const reportId = (
    await gql(
      `mutation { createAuditReport(input: { template: AUTHENTICATION, format: JSON, from: "2024-01-01", to: "2024-01-31" }) { id } }`,
    )
  ).createAuditReport.id;
  const retention = (await gql(`{ auditRetention { databaseDays } }`)).auditRetention;
  await gql(
    `mutation ($days: Int!) { updateAuditRetention(input: { databaseDays: $days, defaultTier: "standard", categoryTiers: [] }) { databaseDays } }`,
    {
      days: retention.databaseDays + 1,
    },
  );
  const hook = (
    await gql(
      `mutation { createStreamDestination(input: { kind: "webhook", name: "Key walk", url: "http://127.0.0.1:9/in", enabled: false }) { destination { id } } }`,
    )
  ).createStreamDestination.destination.id;
  await gql(`mutation ($id: ID!) { deleteStreamDestination(id: $id) { id } }`, { id: hook });
  const rule = (await gql(`mutation { enableAlertPreset(preset: "provider_change") { id } }`)).enableAlertPreset.id;
  await gql(`mutation ($id: ID!) { deleteAlertRule(id: $id) { id } }`, { id: rule });
  const status = async (id: string) => (await gql(`query ($id: ID!) { auditExport(id: $id) { status } }`, { id })).auditExport.status;
  await eventually(async () => (await status(exportId)) === "COMPLETED" && (await status(reportId)) === "COMPLETED", {
    what: "the export and the report written by the worker",
  });
  const { url } = (await gql(`mutation ($id: ID!) { createAuditExportDownloadUrl(id: $id) { url } }`, { id: exportId }))
    .createAuditExportDownloadUrl;
  expect((await api.get(url)).status).toBe(200);
  // Their expiry brought forward (standing in for the passing of time), the worker's expiry job removes both files.
  await app.runtime.sequelize.query(`UPDATE audit_exports SET expires_at = now() - interval '1 second' WHERE id IN ($1, $2)`, {
    bind: [exportId, reportId],
  });
  await app.runtime.queues.queue(QueueName.Exports).add("expire-exports", {});
  await eventually(async () => (await status(exportId)) === "EXPIRED" && (await status(reportId)) === "EXPIRED", {
    what: "the export and the report expired by the worker",
  });
  await services.audit.chainCommitted();

  const asked = [
    "audit.export.requested",
    "audit.export.downloaded",
    "audit.report.requested",
    "audit.retention.updated",
    "stream.destination.created",
    "stream.destination.deleted",
    "alert.rule.created",
    "alert.rule.deleted",
  ] as const;
  const events = (await services.audit.list({ eventTypes: [...asked], from: started }, { first: 100 })).events;
  expect([...new Set(events.map((event) => event.eventType))].sort()).toEqual([...asked].sort());
  for (const event of events)
    expect({ type: event.eventType, user: event.user, session: event.sessionId }).toEqual({
      type: event.eventType,
      user: { id: owner.id, email: "keyholder@walk.test" },
      session: `api_key:${keyActor.credential.id}`,
    });
  // Finished by a worker on the requester's behalf (written, then removed after its expiry): the requester and the
  // credential the request came through, as for the request's own events.
  const finished = ["audit.export.completed", "audit.export.expired", "audit.report.completed", "audit.report.expired"] as const;
  const byWorker = (await services.audit.list({ eventTypes: [...finished], from: started }, { first: 100 })).events;
  expect(byWorker.map((event) => event.eventType).sort()).toEqual([...finished].sort());
  for (const event of byWorker)
    expect({ type: event.eventType, by: event.requestId?.split(":")[0], user: event.user, session: event.sessionId }).toEqual({
      type: event.eventType,
      by: "job",
      user: { id: owner.id, email: "keyholder@walk.test" },
      session: `api_key:${keyActor.credential.id}`,
    });
  // And nothing else this caller set off, in a request or a job, names them without the key.
  const everything = (await services.audit.list({ userIds: [owner.id] }, { first: 100 })).events.filter((event) => !setUp.has(event.id));
  expect(everything.length).toBeGreaterThanOrEqual(asked.length + finished.length);
  expect(everything.filter((event) => event.sessionId !== `api_key:${keyActor.credential.id}`)).toEqual([]);
});
