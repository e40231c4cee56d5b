import type { ServerResponse } from "node:http";
import { FakeHttpServer, type RecordedRequest } from "../fakes/fake-http";
import { Browser } from "../helpers/browser";

/**
 * The test Browser's cookie and redirect rules, against two loopback origins standing for two sites
 * (the service and an IdP). SSO tests rely on these rules to catch cookies a real browser would drop.
 */
describe("the test Browser", () => {
  let site: FakeHttpServer;
  let other: FakeHttpServer;
  let siteUrl: string;
  let otherUrl: string;

  /** Routes shared by both servers: /set?cookie=..., /redirect?to=...&status=..., /form, anything else echoes. */
  function route(request: RecordedRequest, res: ServerResponse): void {
    if (request.path === "/set") {
      res.writeHead(200, { "set-cookie": request.query.getAll("cookie") });
      return void res.end("set");
    }
    if (request.path === "/redirect") {
      res.writeHead(Number(request.query.get("status") ?? 302), { location: request.query.get("to")! });
      return void res.end();
    }
    if (request.path === "/form") {
      res.writeHead(200, { "content-type": "text/html" });
      return void res.end(
        `<form id="f" method="post" action="/submitted?x=1"><input type="hidden" name="token" value="a&amp;b"><input name="unchecked" type="checkbox"><textarea name="note">hi</textarea></form><button name="go" value="yes" form="f">Go</button>`,
      );
    }
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(`${request.method} ${request.path}`);
  }

  beforeAll(async () => {
    site = new FakeHttpServer(route);
    other = new FakeHttpServer(route);
    siteUrl = await site.start();
    otherUrl = await other.start();
  });

  afterAll(async () => {
    await Promise.all([site.stop(), other.stop()]);
  });

  const lastCookieHeader = (server: FakeHttpServer) => server.requests.at(-1)!.headers.cookie ?? "";
  const setUrl = (base: string, ...cookies: string[]) =>
    `${base}/set?${cookies.map((cookie) => `cookie=${encodeURIComponent(cookie)}`).join("&")}`;

  test("keeps each Set-Cookie with its raw attributes, scoped by path, replaced by name and path, deleted by Max-Age=0", async () => {
    const browser = new Browser();
    await browser.get(
      setUrl(
        siteUrl,
        "sid=1; Path=/; HttpOnly; SameSite=Lax; Max-Age=60",
        "flow=abc; Path=/auth/sso; SameSite=Strict",
        "pref=x; Expires=Wed, 21 Oct 2099 07:28:00 GMT",
      ),
    );
    expect(browser.cookie(siteUrl, "sid")).toMatchObject({
      value: "1",
      path: "/",
      httpOnly: true,
      secure: false,
      sameSite: "Lax",
      attributes: { path: "/", httponly: true, samesite: "Lax", "max-age": "60" },
      raw: "sid=1; Path=/; HttpOnly; SameSite=Lax; Max-Age=60",
    });
    expect(browser.cookie(siteUrl, "sid")!.expiresAt).toBeGreaterThan(Date.now() + 50_000);
    expect(browser.cookie(siteUrl, "pref")).toMatchObject({ path: "/", expiresAt: Date.parse("Wed, 21 Oct 2099 07:28:00 GMT") });
    expect(browser.cookies(otherUrl)).toEqual([]);

    await browser.get(`${siteUrl}/auth/sso/acme/callback`);
    expect(lastCookieHeader(site)).toBe("flow=abc; sid=1; pref=x");
    await browser.get(`${siteUrl}/auth/ssologout`);
    expect(lastCookieHeader(site)).toBe("sid=1; pref=x");

    await browser.get(setUrl(siteUrl, "sid=2; Path=/", "flow=; Path=/auth/sso; Max-Age=0"));
    expect(browser.cookies(siteUrl).map((cookie) => `${cookie.name}=${cookie.value}`)).toEqual(["pref=x", "sid=2"]);
  });

  test("treats each origin as a site: Strict cookies stay home on cross-site redirects, Lax ones go on GETs only", async () => {
    const browser = new Browser();
    await browser.get(setUrl(siteUrl, "strict=s; Path=/; SameSite=Strict", "lax=l; Path=/; SameSite=Lax", "plain=p; Path=/"));

    // The IdP sends the browser back to the service: a cross-site redirect chain ending in a GET.
    const back = await browser.get(`${otherUrl}/redirect?to=${encodeURIComponent(`${siteUrl}/callback`)}`);
    expect(back.text).toBe("GET /callback");
    expect(lastCookieHeader(site)).toBe("lax=l; plain=p");

    // A cross-site POST (a 307 keeps the method): only SameSite=None cookies would go.
    await browser.post(`${otherUrl}/redirect?status=307&to=${encodeURIComponent(`${siteUrl}/callback`)}`, { code: "c" });
    expect(lastCookieHeader(site)).toBe("");
    expect(site.requests.at(-1)!.headers.origin).toBe(otherUrl);

    await browser.get(`${siteUrl}/home`);
    expect(lastCookieHeader(site)).toBe("strict=s; lax=l; plain=p");

    const lenient = new Browser({ sameSite: "off" });
    await lenient.get(setUrl(siteUrl, "strict=s; Path=/; SameSite=Strict"));
    await lenient.get(`${otherUrl}/redirect?to=${encodeURIComponent(`${siteUrl}/callback`)}`);
    expect(lastCookieHeader(site)).toBe("strict=s");
  });

  test("refuses cookies a browser refuses, and sends Secure ones to loopback over http", async () => {
    const browser = new Browser();
    await browser.get(setUrl(siteUrl, "none=n; SameSite=None", "foreign=f; Domain=example.com", "secure=s; Secure; Path=/"));
    expect(browser.rejectedCookies.map((rejected) => rejected.reason)).toEqual([
      "SameSite=None without Secure",
      "Domain example.com does not match 127.0.0.1",
    ]);
    expect(browser.cookie(siteUrl, "secure")?.secure).toBe(true);
    expect(browser.cookieHeader(`${siteUrl}/`)).toBe("secure=s");
  });

  test("follows redirects like a browser: 303 turns a POST into a GET, 307 keeps it, every hop is recorded", async () => {
    const browser = new Browser();
    const seeOther = await browser.post(`${siteUrl}/redirect?status=303&to=/landing`, { a: "1" });
    expect(seeOther.hops.map((hop) => [hop.method, new URL(hop.url).pathname, hop.status])).toEqual([
      ["POST", "/redirect", 303],
      ["GET", "/landing", 200],
    ]);
    expect(site.requests.at(-1)!.body).toBe("");

    const temporary = await browser.post(`${siteUrl}/redirect?status=307&to=/landing`, { a: "1" });
    expect(temporary.text).toBe("POST /landing");
    expect(site.requests.at(-1)).toMatchObject({ body: "a=1", headers: expect.objectContaining({ origin: siteUrl }) });
    expect(browser.history).toHaveLength(4);
  });

  test("stops before a chosen redirect, can follow it later, and gives up after maxRedirects", async () => {
    const browser = new Browser();
    const target = `${otherUrl}/callback?code=c&state=s`;
    const stopped = await browser.get(`${siteUrl}/redirect?to=${encodeURIComponent(target)}`, {
      stopAt: (url) => url.pathname === "/callback",
    });
    expect(stopped).toMatchObject({ status: 302, location: target });
    expect(other.requestsTo(/^\/callback$/)).toHaveLength(0);
    expect((await browser.follow(stopped)).text).toBe("GET /callback");

    const loop = await browser.get(`${siteUrl}/redirect?to=/redirect%3Fto%3D%2Fredirect`, { maxRedirects: 1 });
    expect(loop.status).toBe(302);
    expect(loop.hops).toHaveLength(2);
  });

  test("submits a form with its hidden fields, the chosen button and extra fields", async () => {
    const browser = new Browser();
    const page = await browser.get(`${siteUrl}/form`);
    const submitted = await browser.submitForm(page, { submitter: "go", fields: { extra: "1" } });
    expect(submitted.text).toBe("POST /submitted");
    expect(Object.fromEntries(new URLSearchParams(site.requests.at(-1)!.body))).toEqual({
      token: "a&b",
      note: "hi",
      go: "yes",
      extra: "1",
    });
    await expect(browser.submitForm(page, { submitter: "missing" })).rejects.toThrow(/no submit button named missing/);
  });
});
