import { createAccount, createUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

test("a created transaction can be read back over REST", async () => {
  const user = await createUser(app.runtime.services);
  const account = await createAccount(app.runtime.services, user);
  const api = apiKeyClient(`${app.url}/api/v1`, user.key);
  const created = await api.post("/transactions", {
    transaction: { account_id: account.id, date: "2024-01-15", amount: 75.5, name: "Groceries" },
  });
  expect(created.status).toBe(201);
  const read = await api.get(`/transactions/${created.body.id}`);
  expect(read.status).toBe(200);
  expect(read.body).toMatchObject({ amount: "$75.50", amount_cents: 7550, signed_amount_cents: -7550, classification: "expense" });
});
