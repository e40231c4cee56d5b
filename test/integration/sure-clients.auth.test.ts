import { randomUUID } from "node:crypto";
import { createUser } from "../helpers/fixtures";
import { apiKeyClient, client } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * sure-cli's `login` and token refresh (POST /api/v1/auth/login, /auth/refresh with its `device`
 * object) and `PATCH /api/v1/auth/enable_ai`, audited like our own sign-in.
 */

let app: TestApp;
const PASSWORD = "correct horse battery staple";
/** What sure-cli's LoginRequest/RefreshRequest carry besides the credentials. */
const DEVICE = { device_id: "cli-1234", device_name: "sure-cli", device_type: "cli", os_version: "linux", app_version: "0.1.0" };

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.stop());

async function newUser() {
  const email = `cli-${randomUUID()}@example.test`;
  const user = await app.runtime.services.users.create({ email, password: PASSWORD });
  return { email, user };
}

const events = async (type: string, email: string) =>
  (await app.runtime.services.audit.list({ eventTypes: [type] }, { first: 100 })).events.filter((event) => event.user?.email === email);

describe("POST /api/v1/auth/login and /refresh", () => {
  test("a login with sure-cli's body answers upstream's token response with the user, and is audited", async () => {
    const { email, user } = await newUser();
    const api = client(`${app.url}/api/v1`, { accept: "application/json", "user-agent": "sure-cli/0.1" });
    const response = await api.post("/auth/login", { email, password: PASSWORD, device: DEVICE });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      token_type: "Bearer",
      expires_in: expect.any(Number),
      created_at: expect.any(Number),
      user: { id: user.id, email, first_name: null, last_name: null, ui_layout: "dashboard", ai_enabled: false },
    });
    const [event] = await events("auth.login.success", email);
    expect(event).toMatchObject({ userAgent: "sure-cli/0.1", user: { email } });

    // The token works on every route, as sure-cli's Bearer mode uses it.
    const bearer = client(`${app.url}/api/v1`, { authorization: `Bearer ${response.body.access_token}` });
    expect((await bearer.get("/accounts")).status).toBe(200);

    const refreshed = await api.post("/auth/refresh", { refresh_token: response.body.refresh_token, device: DEVICE });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      token_type: "Bearer",
      expires_in: expect.any(Number),
      created_at: expect.any(Number),
    });
    expect(refreshed.body.access_token).not.toBe(response.body.access_token);
    expect(await events("auth.token.refreshed", email)).toHaveLength(1);
    // Within the grace window the replaced token answers with the same new pair (a concurrent refresh).
    const again = await api.post("/auth/refresh", { refresh_token: response.body.refresh_token, device: DEVICE });
    expect(again.status).toBe(200);
    expect(again.body.refresh_token).toBe(refreshed.body.refresh_token);
  });

  test("refusals answer upstream's bodies: the message in `error`, as the app shows it", async () => {
    const { email } = await newUser();
    const api = client(`${app.url}/api/v1`);
    const wrong = await api.post("/auth/login", { email, password: "nope", device: DEVICE });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("Invalid email or password");
    expect(wrong.body.mfa_required).toBeUndefined();
    expect(await events("auth.login.failed", email)).toHaveLength(1);
    // Upstream looks the user up with what it got: no password is the same 401.
    const missing = await api.post("/auth/login", { email, device: DEVICE });
    expect(missing.status).toBe(401);
    expect(missing.body.error).toBe("Invalid email or password");
    const noToken = await api.post("/auth/refresh", { device: DEVICE });
    expect(noToken.status).toBe(400);
    expect(noToken.body.error).toBe("Refresh token is required");
    const badToken = await api.post("/auth/refresh", { refresh_token: "fgr_nothing", device: DEVICE });
    expect(badToken.status).toBe(401);
    expect(badToken.body.error).toBe("Invalid refresh token");
    const partialDevice = await api.post("/auth/login", { email, password: PASSWORD, device: { device_id: "x" } });
    expect(partialDevice.status).toBe(400);
    expect(partialDevice.body.error).toBe("Device information is required");
  });
});

describe("PATCH /api/v1/auth/enable_ai", () => {
  test("turns the assistant on for the caller, audited once, and the chat routes open", async () => {
    const owner = await createUser(app.runtime.services);
    const api = apiKeyClient(`${app.url}/api/v1`, owner.key);
    expect((await api.get("/chats")).status).toBe(403);
    const enabled = await api.patch("/auth/enable_ai");
    expect(enabled.status).toBe(200);
    expect(enabled.body).toEqual({ user: { id: owner.userId, email: owner.email, name: null, ai_enabled: true } });
    expect((await api.get("/chats")).status).toBe(200);
    expect((await api.put("/auth/enable_ai")).status).toBe(200);
    const updates = await events("user.updated", owner.email);
    expect(updates).toHaveLength(1);
    expect(updates[0].changes).toEqual({ ai_enabled: { old: false, new: true } });
  });

  test("a read-only key is refused, no key is 401", async () => {
    const owner = await createUser(app.runtime.services);
    expect((await apiKeyClient(`${app.url}/api/v1`, owner.readKey).patch("/auth/enable_ai")).status).toBe(403);
    expect((await client(`${app.url}/api/v1`).patch("/auth/enable_ai")).status).toBe(401);
  });
});
