import { createUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
let app: TestApp;
beforeAll(async () => { app = await startTestApp(); });
afterAll(() => app.stop());
test("probe", async () => {
  const user = await createUser(app.runtime.services);
  const g = apiKeyClient(app.url, user.key);
  const show = (label: string, r: any) => console.log(label, r.status, JSON.stringify(r.body).slice(0, 400));
  show("sub over http", await g.graphql(`subscription { chatEvents(chatId: "00000000-0000-0000-0000-000000000000") { kind } }`));
  show("xff zone", await client(app.url, { "x-forwarded-for": "fe80::1%eth0", "x-api-key": user.key }).post("/api/v1/merchants", { merchant: { name: "x" } }));
  show("xff junk", await client(app.url, { "x-forwarded-for": "not-an-ip, ::1%lo", "x-api-key": user.key }).get("/api/v1/merchants"));
  show("head", await client(app.url, { "x-api-key": user.key }).get("/api/v1/merchants", {}).then(() => fetch(app.url + "/api/v1/merchants", { method: "HEAD", headers: { "x-api-key": user.key } })).then((r) => ({ status: r.status, body: "" })));
  show("nul", await g.post("/api/v1/merchants", { merchant: { name: "a\u0000b" } }));
  show("nul gql", await g.graphql(`mutation { createMerchant(input: { name: "a\\u0000b" }) { id } }`));
  show("api_key query", await client(app.url).get("/api/v1/merchants?api_key=" + user.key));
  show("empty query", await g.graphql(`{ }`));
});
