import { randomUUID } from "node:crypto";
import { generateSync } from "otplib";
import { client, type HttpResponse } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * Sure's mobile app (we-promise/sure `mobile/`), replayed as it speaks: AuthService's JSON calls with
 * ApiConfig.jsonHeaders() (Content-Type and Accept JSON, plus the user's custom proxy headers), the
 * `device` object of every sign-in, `otp_code` after a 401 with `mfa_required`, the API-key mode's
 * X-Api-Key, and the "Test connection" probe of /sessions/new with htmlHeaders().
 */

let app: TestApp;
const PASSWORD = "correct horse battery staple";
/** What the app's DeviceService sends (device_type is ios, android or web upstream). */
const DEVICE = { device_id: "0f9e3c1a-phone", device_name: "Pixel 8", device_type: "android", os_version: "14", app_version: "0.7.1" };
/** A reverse proxy in front of the server wants its header on every call (the app's custom proxy headers). */
const PROXY = { "CF-Access-Client-Id": "app.example" };
// Header names are case-insensitive on the wire; lower case here so the test client does not add a second content-type.
const jsonHeaders = { ...PROXY, "content-type": "application/json", accept: "application/json" };

beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.stop());

const api = () => client(`${app.url}/api/v1`, jsonHeaders);
const bearer = (token: string) => client(`${app.url}/api/v1`, { ...PROXY, Authorization: `Bearer ${token}`, Accept: "application/json" });

async function newUser(role?: string) {
  const email = `phone-${randomUUID()}@example.test`;
  const user = await app.runtime.services.users.create({ email, password: PASSWORD, role, name: "Ada Lovelace" });
  return { email, user };
}

const events = async (type: string, email: string) =>
  (await app.runtime.services.audit.list({ eventTypes: [type] }, { first: 200 })).events.filter((event) => event.user?.email === email);

/** The app's AuthTokens.fromJson and User.fromJson accept it, and the token opens the dashboard's calls. */
async function expectUsableTokens(response: HttpResponse, email: string) {
  expect(response.status).toBe(200);
  expect(response.body).toMatchObject({
    access_token: expect.any(String),
    refresh_token: expect.any(String),
    token_type: "Bearer",
    expires_in: expect.any(Number),
    created_at: expect.any(Number),
    user: { id: expect.any(String), email, ui_layout: "dashboard", ai_enabled: false },
  });
  expect((await bearer(response.body.access_token).get("/accounts")).status).toBe(200);
}

/** A code of the step `offsetSteps` after the current one (each step's code is accepted once). */
const totp = (secret: string, offsetSteps = 0) => generateSync({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSteps * 30 });

async function consoleToken(email: string): Promise<string> {
  const login = await client(app.url).post("/auth/login", { email, password: PASSWORD });
  expect(login.status).toBe(200);
  return login.body.access_token;
}

async function enrol(email: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const gql = client(app.url, { authorization: `Bearer ${await consoleToken(email)}` });
  const begun = await gql.graphql(`mutation { beginTwoFactorEnrolment { secret otpauthUri qrCodeSvg } }`);
  const enrolment = begun.body.data.beginTwoFactorEnrolment;
  expect(enrolment.otpauthUri).toContain(`otpauth://totp/`);
  expect(enrolment.qrCodeSvg).toContain("<svg");
  const confirmed = await gql.graphql(`mutation ($code: String!) { confirmTwoFactorEnrolment(code: $code) }`, {
    code: totp(enrolment.secret),
  });
  const recoveryCodes = confirmed.body.data.confirmTwoFactorEnrolment as string[];
  expect(recoveryCodes).toHaveLength(10);
  const status = await gql.graphql(`{ twoFactorStatus { enabled recoveryCodesLeft pending } }`);
  expect(status.body.data.twoFactorStatus).toEqual({ enabled: true, recoveryCodesLeft: 10, pending: false });
  return { secret: enrolment.secret, recoveryCodes };
}

describe("the app's connection test and password sign-in", () => {
  test("GET /sessions/new with the app's HTML headers answers 200 (a Sure server)", async () => {
    const response = await client(app.url, { ...PROXY, Accept: "text/html" }).get("/sessions/new");
    expect(response.status).toBe(200);
    expect(response.text).toContain("/admin/sign-in");
  });

  test("password sign-in with the device ends in usable tokens, the device in the audit event", async () => {
    const { email } = await newUser();
    const login = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE });
    await expectUsableTokens(login, email);
    expect(login.body.user).toMatchObject({ first_name: "Ada", last_name: "Lovelace" });
    const [event] = await events("auth.login.success", email);
    expect(event.changes).toEqual({ device: { old: null, new: DEVICE } });
  });

  test("API-key mode: GET /accounts with X-Api-Key and Accept, as the app's API-key login checks it", async () => {
    const { user } = await newUser();
    const key = (await app.runtime.services.apiKeys.create(user.id, { scope: "read_write" })).plaintext;
    const response = await client(`${app.url}/api/v1`, { ...PROXY, "X-Api-Key": key, Accept: "application/json" }).get("/accounts");
    expect(response.status).toBe(200);
    expect(response.body.accounts).toEqual([]);
  });
});

describe("two-factor sign-in (TOTP)", () => {
  test("password + TOTP: 401 mfa_required without the code, tokens with it; a recovery code works once; all audited", async () => {
    const { email } = await newUser();
    const { secret, recoveryCodes } = await enrol(email);
    expect(await events("auth.mfa.enrolled", email)).toHaveLength(1);

    const first = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE });
    expect(first.status).toBe(401);
    expect(first.body).toMatchObject({ error: "Two-factor authentication required", mfa_required: true });

    // The app asks for the code and sends the same body again with otp_code.
    const second = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE, otp_code: totp(secret, 1) });
    await expectUsableTokens(second, email);
    expect(await events("auth.mfa.verified", email)).toHaveLength(1);
    // The same code again (its step is used): refused.
    const replayed = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE, otp_code: totp(secret, 1) });
    expect(replayed.status).toBe(401);
    expect(replayed.body.mfa_required).toBe(true);

    const withRecovery = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE, otp_code: recoveryCodes[0] });
    await expectUsableTokens(withRecovery, email);
    expect(await events("auth.mfa.recovery_code_used", email)).toHaveLength(1);
    const recoveryAgain = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE, otp_code: recoveryCodes[0] });
    expect(recoveryAgain.status).toBe(401);

    // Secrets at rest: the TOTP secret sealed, recovery codes hashed.
    const [row] = (await app.runtime.sequelize.query(
      `SELECT otp_secret_sealed AS sealed, (SELECT array_agg(encode(code_hash, 'escape')) FROM user_recovery_codes WHERE user_id = users.id) AS codes
         FROM users WHERE email = $1`,
      { bind: [email], plain: false, raw: true },
    )) as unknown as [Array<{ sealed: string; codes: string[] }>];
    expect(row[0].sealed).toMatch(/^v1:/);
    expect(row[0].sealed).not.toContain(secret);
    expect(JSON.stringify(row[0].codes)).not.toContain(recoveryCodes[1]);
  });

  test("wrong codes count toward the lockout; an administrator's reset is audited and sign-in works without a code again", async () => {
    const { email, user } = await newUser();
    await enrol(email);
    for (let attempt = 0; attempt < 5; attempt++) {
      const wrong = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE, otp_code: "000000" });
      expect(wrong.status).toBe(401);
    }
    const failures = await events("auth.login.failed", email);
    expect(failures.filter((event) => event.error?.startsWith("invalid_otp_code"))).toHaveLength(5);
    expect(failures.some((event) => event.error === "invalid_otp_code; account locked")).toBe(true);
    // Locked: even the right password is refused now.
    expect((await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE })).body.error).toBe("Invalid email or password");

    const admin = await newUser("admin");
    await app.runtime.sequelize.query(`UPDATE users SET locked_until = NULL WHERE id = $1`, { bind: [user.id] });
    const gql = client(app.url, { authorization: `Bearer ${await consoleToken(admin.email)}` });
    const reset = await gql.graphql(`mutation ($id: ID!) { resetTwoFactor(userId: $id) }`, { id: user.id });
    expect(reset.body.data.resetTwoFactor).toBe(true);
    const [event] = await events("auth.mfa.reset", admin.email);
    expect(event.resource).toMatchObject({ type: "user", id: user.id });
    await expectUsableTokens(await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE }), email);
  });
});

describe("refresh under concurrency", () => {
  test("100 pairs of concurrent refreshes with the same token: every pair ends signed in, with the same new pair", async () => {
    const { email } = await newUser();
    const login = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE });
    let refreshToken: string = login.body.refresh_token;
    for (let pair = 0; pair < 100; pair++) {
      const [a, b] = await Promise.all([
        api().post("/auth/refresh", { refresh_token: refreshToken, device: DEVICE }),
        api().post("/auth/refresh", { refresh_token: refreshToken, device: DEVICE }),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.body.refresh_token).toBe(b.body.refresh_token);
      expect(a.body.access_token).toBe(b.body.access_token);
      refreshToken = a.body.refresh_token;
      if (pair % 25 === 0) expect((await bearer(a.body.access_token).get("/accounts")).status).toBe(200);
    }
    const [last] = await Promise.all([api().post("/auth/refresh", { refresh_token: refreshToken, device: DEVICE })]);
    expect((await bearer(last.body.access_token).get("/accounts")).status).toBe(200);
    expect(await events("auth.token.revoked", email)).toHaveLength(0);
  });

  test("a replay after the grace window revokes the whole family, audited with the device", async () => {
    const { email } = await newUser();
    const login = await api().post("/auth/login", { email, password: PASSWORD, device: DEVICE });
    const refreshed = await api().post("/auth/refresh", { refresh_token: login.body.refresh_token, device: DEVICE });
    expect(refreshed.status).toBe(200);
    // The window (REFRESH_REUSE_GRACE_SECONDS, 30 s) has passed: moved back in the database rather than waited for.
    await app.runtime.sequelize.query(`UPDATE auth_tokens SET rotated_at = rotated_at - interval '1 hour' WHERE rotated_at IS NOT NULL`);
    const replay = await api().post("/auth/refresh", { refresh_token: login.body.refresh_token, device: DEVICE });
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe("Invalid refresh token");
    // The family is gone: the pair the legitimate client holds stops working too.
    expect((await bearer(refreshed.body.access_token).get("/accounts")).status).toBe(401);
    expect((await api().post("/auth/refresh", { refresh_token: refreshed.body.refresh_token, device: DEVICE })).status).toBe(401);
    const [revoked] = await events("auth.token.revoked", email);
    expect(revoked).toMatchObject({ severity: "error", action: "revoke_session", resource: { label: "refresh_token_reuse" } });
    expect(revoked.changes).toEqual({ device: { old: null, new: DEVICE } });
  });
});

describe("MFA_REQUIRED_FOR_ADMINS", () => {
  let strict: TestApp;
  beforeAll(async () => {
    strict = await startTestApp({ env: { MFA_REQUIRED_FOR_ADMINS: "true" } });
  });
  afterAll(() => strict?.stop());

  test("an administrator without a second factor enrols at the console's sign-in, then the app needs the code", async () => {
    const email = `admin-${randomUUID()}@example.test`;
    await strict.runtime.services.users.create({ email, password: PASSWORD, role: "admin" });
    const appLogin = await client(`${strict.url}/api/v1`, jsonHeaders).post("/auth/login", { email, password: PASSWORD, device: DEVICE });
    expect(appLogin.status).toBe(403);
    expect(appLogin.body).toMatchObject({ error: "Two-factor authentication setup required", mfa_setup_required: true });
    expect(appLogin.body.details).toBeUndefined();

    const consoleLogin = await client(strict.url).post("/auth/login", { email, password: PASSWORD });
    expect(consoleLogin.status).toBe(403);
    const { secret, qr_code_svg: qr } = consoleLogin.body.details;
    expect(qr).toContain("<svg");
    const enrolled = await client(strict.url).post("/auth/login", { email, password: PASSWORD, otp_code: totp(secret) });
    expect(enrolled.status).toBe(200);
    expect(enrolled.body.recovery_codes).toHaveLength(10);

    const again = await client(`${strict.url}/api/v1`, jsonHeaders).post("/auth/login", { email, password: PASSWORD, device: DEVICE });
    expect(again.status).toBe(401);
    expect(again.body.mfa_required).toBe(true);
    const withCode = await client(`${strict.url}/api/v1`, jsonHeaders).post("/auth/login", {
      email,
      password: PASSWORD,
      device: DEVICE,
      otp_code: totp(secret, 1),
    });
    expect(withCode.status).toBe(200);
  });
});
