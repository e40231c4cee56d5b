/**
 * A small browser for tests of redirect flows (SSO login and logout): fetch with `redirect: "manual"`,
 * redirects followed here across origins, a cookie jar, and a record of every hop.
 *
 *   const browser = new Browser();
 *   const page = await browser.get(`${app.url}/auth/sso/acme/start`);        // follows service → IdP → service
 *   expect(browser.history.map((hop) => hop.status)).toEqual([302, 303, 303, 303, 303, 302, 302]);
 *   browser.cookie(app.url, "fg_session")?.httpOnly;                        // true
 *
 *   // Stop before a redirect is followed, e.g. to tamper with the callback URL:
 *   const atCallback = await browser.get(startUrl, { stopAt: (target) => target.pathname.endsWith("/callback") });
 *   const forged = new URL(atCallback.location!); forged.searchParams.set("state", "forged");
 *   const rejected = await browser.get(forged.href);
 *
 *   // An HTML form (oidc-provider's logout confirmation):
 *   const confirm = await browser.get(endSessionUrl);                        // 200, a form with a hidden xsrf field
 *   const done = await browser.submitForm(confirm, { submitter: "logout" });  // the "Yes, sign me out" button
 *
 * How it models a browser, and where it is simpler:
 * - Cookies are kept per ORIGIN (scheme, host and port). Real browsers key cookies by host and ignore the
 *   port, so on 127.0.0.1 the service and every IdP would share one jar and two oidc-provider instances
 *   would overwrite each other's `_session` cookie. Per origin models the real deployment, where the
 *   service and the IdPs live on different hosts. `Domain` is recorded; a cookie whose Domain does not
 *   match the host is rejected.
 * - SameSite is enforced as if every origin were its own site (same reasoning): a request is cross-site
 *   when the navigation's initiator or any earlier hop of its redirect chain has another origin.
 *   Strict cookies go only on same-site requests; Lax ones (and those without SameSite, like Chrome)
 *   also on cross-site GET navigations; None ones always. `sameSite: "off"` sends all of them.
 * - Secure cookies are stored and sent over https and, like Chrome and Firefox, over http to loopback
 *   hosts (127.0.0.1, localhost, [::1]). `SameSite=None` without `Secure` is rejected, as in Chrome.
 *   Rejected Set-Cookie lines are kept in `rejectedCookies` with the reason.
 * - Redirects: 303 (and 301/302 after a POST) continue as GET without a body; 307/308 keep the method
 *   and body. Non-GET requests carry an `Origin` header (`null` after a cross-origin redirect).
 * - No JavaScript, no CORS, no Sec-Fetch-* headers, no cache. The one script it imitates is the
 *   self-submitting form (`document.forms[0].submit()` on load), which IdPs use for form_post responses
 *   and oidc-provider uses to end the previous session when another account logs in: such a page's
 *   first form is submitted as part of the same navigation (`autoSubmitForms: false` turns this off).
 */

export type Hop = {
  method: string;
  url: string;
  status: number;
  /** The absolute redirect target, when the answer was a redirect. */
  location?: string;
  /** The answer was a self-submitting form page, and the browser submitted its form (the next hop). */
  autoSubmitted?: true;
};

export type BrowserCookie = {
  name: string;
  value: string;
  /** The origin whose jar holds the cookie. */
  origin: string;
  path: string;
  /** Epoch milliseconds; undefined for a session cookie. */
  expiresAt?: number;
  httpOnly: boolean;
  secure: boolean;
  /** The SameSite attribute as sent ("Strict", "Lax", "None"), undefined when absent. */
  sameSite?: string;
  domain?: string;
  /** Every attribute as the server sent it, keyed by lower-case name; flags are `true`. */
  attributes: Record<string, string | true>;
  /** The Set-Cookie header value. */
  raw: string;
};

export type Page = {
  /** The URL of the last request of this navigation. */
  url: string;
  status: number;
  headers: Headers;
  text: string;
  /** This navigation's hops, in order (also appended to `browser.history`). */
  hops: Hop[];
  /** Set when the navigation ended on a redirect it did not follow (`stopAt` or `maxRedirects`): its absolute target. */
  location?: string;
};

export type NavigateOptions = {
  method?: string;
  /** Sent as application/x-www-form-urlencoded when a URLSearchParams or a plain object. */
  body?: URLSearchParams | Record<string, string> | string;
  headers?: Record<string, string>;
  /** Checked before each redirect is followed; true ends the navigation there (the page has `location`). */
  stopAt?: (target: URL, hop: Hop) => boolean;
  /** Redirects to follow at most (default 20); the navigation then ends with `location` set. */
  maxRedirects?: number;
};

export type SubmitFormOptions = {
  /** Which form: its id, or its position among the page's forms (default the first). */
  form?: string | number;
  /** Name of the submit button (inside the form or tied to it by `form=`) whose name=value is sent. */
  submitter?: string;
  /** Fields to set or override. */
  fields?: Record<string, string>;
} & Pick<NavigateOptions, "stopAt" | "maxRedirects" | "headers">;

export type BrowserOptions = {
  /** "per-origin" (default) enforces SameSite treating each origin as a site; "off" ignores SameSite. */
  sameSite?: "per-origin" | "off";
  /** Submit self-submitting form pages (default true); see the class comment. */
  autoSubmitForms?: boolean;
};

type ParsedForm = { id?: string; action: string; method: string; fields: Array<[string, string]>; buttons: Array<[string, string]> };

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

export class Browser {
  /** Every hop of every navigation, in order. */
  readonly history: Hop[] = [];
  /** Set-Cookie lines the jar refused, with why. */
  readonly rejectedCookies: Array<{ url: string; raw: string; reason: string }> = [];
  private readonly jars = new Map<string, BrowserCookie[]>();

  constructor(private readonly options: BrowserOptions = {}) {}

  get(url: string, options: Omit<NavigateOptions, "method" | "body"> = {}): Promise<Page> {
    return this.navigate(url, { ...options, method: "GET" });
  }

  /** POSTs a form-encoded body (or a string) as a top-level navigation started from `url`'s own origin. */
  post(url: string, body: NavigateOptions["body"], options: Omit<NavigateOptions, "method" | "body"> = {}): Promise<Page> {
    return this.navigate(url, { ...options, method: "POST", body }, new URL(url).origin);
  }

  /** Continues a navigation that stopped at a redirect (`page.location`). */
  async follow(page: Page, options: Omit<NavigateOptions, "method" | "body"> = {}): Promise<Page> {
    if (!page.location) throw new Error(`nothing to follow: ${page.url} answered ${page.status} without a redirect`);
    return this.navigate(page.location, { ...options, method: "GET" }, new URL(page.url).origin);
  }

  /**
   * Submits a form of `page` the way a browser does: the form's inputs (hidden ones included), the
   * chosen submit button's name=value, then `fields`. The request's initiator is the page's origin.
   */
  async submitForm(page: Page, options: SubmitFormOptions = {}): Promise<Page> {
    const forms = parseForms(page.text, page.url);
    const form = typeof options.form === "string" ? forms.find((candidate) => candidate.id === options.form) : forms[options.form ?? 0];
    if (!form) throw new Error(`no form ${options.form ?? 0} on ${page.url}: ${page.text.slice(0, 300)}`);
    if (options.submitter && !form.buttons.some(([name]) => name === options.submitter)) {
      throw new Error(`form on ${page.url} has no submit button named ${options.submitter}`);
    }
    const { target, method, body } = formSubmission(form, options.submitter, options.fields);
    const { fields: _fields, submitter: _submitter, form: _form, ...navigate } = options;
    return this.navigate(target.href, { ...navigate, method, body }, new URL(page.url).origin);
  }

  /** The live cookies the jar holds for `url`'s origin (whatever their path). */
  cookies(url: string): BrowserCookie[] {
    return this.liveJar(new URL(url).origin);
  }

  cookie(url: string, name: string): BrowserCookie | undefined {
    return this.cookies(url).find((cookie) => cookie.name === name);
  }

  /** Stores a cookie as if `url` had answered with this Set-Cookie value (e.g. to plant a forged one). */
  setCookie(url: string, setCookie: string): void {
    this.store(new URL(url), setCookie);
  }

  /** Forgets the cookies of one origin, or of all. */
  clearCookies(url?: string): void {
    if (url) this.jars.delete(new URL(url).origin);
    else this.jars.clear();
  }

  /** The Cookie header this browser would send for a same-site GET to `url`. */
  cookieHeader(url: string): string {
    return this.cookiesFor(new URL(url), "GET", false);
  }

  /**
   * One navigation: the request, then each redirect. `initiator` is the origin of the page that started
   * it (undefined: typed into the address bar, same-site with its target).
   */
  async navigate(url: string, options: NavigateOptions = {}, initiator?: string): Promise<Page> {
    const hops: Hop[] = [];
    const chain = initiator ? [initiator] : [];
    let target = new URL(url);
    let method = (options.method ?? "GET").toUpperCase();
    let body = encodeBody(options.body);
    const maxRedirects = options.maxRedirects ?? 20;
    for (;;) {
      const crossSite = this.options.sameSite !== "off" && chain.some((origin) => origin !== target.origin);
      const headers: Record<string, string> = { ...options.headers };
      const cookie = this.cookiesFor(target, method, crossSite);
      if (cookie) headers.cookie = cookie;
      if (body !== undefined) headers["content-type"] ??= body.type;
      if (method !== "GET" && method !== "HEAD") {
        const sameOrigin = chain.every((origin) => origin === chain[0]);
        headers.origin = chain.length && sameOrigin ? chain[0] : "null";
      }
      const response = await fetch(target, { method, headers, body: body?.content, redirect: "manual" });
      for (const line of response.headers.getSetCookie()) this.store(target, line);
      const locationHeader = response.headers.get("location");
      const isRedirect = response.status >= 300 && response.status < 400 && locationHeader !== null;
      const hop: Hop = { method, url: target.href, status: response.status };
      if (isRedirect) hop.location = new URL(locationHeader, target).href;
      hops.push(hop);
      this.history.push(hop);
      if (!isRedirect) {
        const text = await response.text();
        const autoSubmitted =
          this.options.autoSubmitForms !== false && hops.length <= maxRedirects ? autoSubmitForm(text, target.href) : undefined;
        if (!autoSubmitted) return { url: target.href, status: response.status, headers: response.headers, text, hops };
        hop.autoSubmitted = true;
        chain.push(target.origin);
        ({ target, method } = autoSubmitted);
        body = encodeBody(autoSubmitted.body);
        continue;
      }
      if (options.stopAt?.(new URL(hop.location!), hop) || hops.length > maxRedirects) {
        const text = await response.text();
        return { url: target.href, status: response.status, headers: response.headers, text, hops, location: hop.location };
      }
      await response.arrayBuffer();
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
        if (method !== "HEAD") method = "GET";
        body = undefined;
      }
      chain.push(target.origin);
      target = new URL(hop.location!);
    }
  }

  private liveJar(origin: string): BrowserCookie[] {
    const now = Date.now();
    const jar = (this.jars.get(origin) ?? []).filter((cookie) => cookie.expiresAt === undefined || cookie.expiresAt > now);
    this.jars.set(origin, jar);
    return jar;
  }

  private cookiesFor(target: URL, method: string, crossSite: boolean): string {
    const secureChannel = target.protocol === "https:" || LOOPBACK_HOSTS.has(target.hostname);
    return this.liveJar(target.origin)
      .filter((cookie) => pathMatches(target.pathname, cookie.path))
      .filter((cookie) => !cookie.secure || secureChannel)
      .filter((cookie) => !crossSite || sameSiteAllows(cookie.sameSite, method))
      .sort((a, b) => b.path.length - a.path.length)
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join("; ");
  }

  private store(url: URL, raw: string): void {
    const parsed = parseSetCookie(raw, url);
    const reject = (reason: string) => void this.rejectedCookies.push({ url: url.href, raw, reason });
    if (!parsed) return reject("no name=value pair");
    if (parsed.secure && url.protocol !== "https:" && !LOOPBACK_HOSTS.has(url.hostname)) return reject("Secure cookie over http");
    if (parsed.sameSite?.toLowerCase() === "none" && !parsed.secure) return reject("SameSite=None without Secure");
    if (parsed.domain && parsed.domain.replace(/^\./, "").toLowerCase() !== url.hostname.toLowerCase()) {
      return reject(`Domain ${parsed.domain} does not match ${url.hostname}`);
    }
    const jar = this.liveJar(url.origin).filter((cookie) => !(cookie.name === parsed.name && cookie.path === parsed.path));
    if (parsed.expiresAt === undefined || parsed.expiresAt > Date.now()) jar.push(parsed);
    this.jars.set(url.origin, jar);
  }
}

/** The request a form submission makes. */
function formSubmission(form: ParsedForm, submitter?: string, fields: Record<string, string> = {}) {
  const values = new URLSearchParams(form.fields);
  const button = submitter ? form.buttons.find(([name]) => name === submitter) : undefined;
  if (button) values.append(...button);
  for (const [name, value] of Object.entries(fields)) values.set(name, value);
  const target = new URL(form.action);
  if (form.method === "GET") {
    target.search = values.toString();
    return { target, method: "GET", body: undefined };
  }
  return { target, method: form.method, body: values };
}

/** The submission of a page that submits its first form as soon as it loads, if this is such a page. */
function autoSubmitForm(html: string, pageUrl: string) {
  if (!/<script\b[^>]*>[^<]*document\.forms\[0\]\.submit\(\)/i.test(html) && !/onload="[^"]*document\.forms\[0\]\.submit\(\)/i.test(html)) {
    return undefined;
  }
  const [form] = parseForms(html, pageUrl);
  return form && formSubmission(form);
}

function encodeBody(body: NavigateOptions["body"]): { content: string; type: string } | undefined {
  if (body === undefined) return undefined;
  if (typeof body === "string") return { content: body, type: "text/plain;charset=UTF-8" };
  const form = body instanceof URLSearchParams ? body : new URLSearchParams(body);
  return { content: form.toString(), type: "application/x-www-form-urlencoded" };
}

function sameSiteAllows(sameSite: string | undefined, method: string): boolean {
  switch (sameSite?.toLowerCase()) {
    case "none":
      return true;
    case "strict":
      return false;
    default:
      return method === "GET" || method === "HEAD";
  }
}

/** RFC 6265 §5.1.4 path-match. */
function pathMatches(requestPath: string, cookiePath: string): boolean {
  if (requestPath === cookiePath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith("/") || requestPath[cookiePath.length] === "/";
}

/** RFC 6265 §5.1.4 default-path: the request path up to its last "/". */
function defaultPath(url: URL): string {
  const last = url.pathname.lastIndexOf("/");
  return last <= 0 ? "/" : url.pathname.slice(0, last);
}

function parseSetCookie(raw: string, url: URL): BrowserCookie | undefined {
  const [pair, ...rest] = raw.split(";");
  const equals = pair.indexOf("=");
  if (equals < 1) return undefined;
  const attributes: Record<string, string | true> = {};
  for (const part of rest) {
    const separator = part.indexOf("=");
    const key = (separator === -1 ? part : part.slice(0, separator)).trim().toLowerCase();
    if (key) attributes[key] = separator === -1 ? true : part.slice(separator + 1).trim();
  }
  const text = (key: string) => (typeof attributes[key] === "string" ? (attributes[key] as string) : undefined);
  const path = text("path")?.startsWith("/") ? text("path")! : defaultPath(url);
  let expiresAt: number | undefined;
  const maxAge = text("max-age");
  if (maxAge !== undefined && /^-?\d+$/.test(maxAge)) expiresAt = Number(maxAge) <= 0 ? 0 : Date.now() + Number(maxAge) * 1000;
  else if (text("expires") !== undefined && !Number.isNaN(Date.parse(text("expires")!))) expiresAt = Date.parse(text("expires")!);
  return {
    name: pair.slice(0, equals).trim(),
    value: pair.slice(equals + 1).trim(),
    origin: url.origin,
    path,
    ...(expiresAt !== undefined ? { expiresAt } : {}),
    httpOnly: "httponly" in attributes,
    secure: "secure" in attributes,
    ...(text("samesite") !== undefined ? { sameSite: text("samesite") } : {}),
    ...(text("domain") !== undefined ? { domain: text("domain") } : {}),
    attributes,
    raw,
  };
}

/** Just enough HTML form parsing for server-rendered forms: <form>, <input>, <button>, <textarea>, and `form=` ties. */
function parseForms(html: string, pageUrl: string): ParsedForm[] {
  const forms: ParsedForm[] = [];
  const byId = new Map<string, ParsedForm>();
  const formPattern = /<form\b([^>]*)>([\s\S]*?)<\/form>/gi;
  for (const [, attributeText, inner] of html.matchAll(formPattern)) {
    const attributes = parseAttributes(attributeText);
    const form: ParsedForm = {
      id: attributes.id,
      action: new URL(attributes.action || pageUrl, pageUrl).href,
      method: (attributes.method || "GET").toUpperCase(),
      fields: [],
      buttons: [],
    };
    collectControls(inner, form);
    forms.push(form);
    if (form.id) byId.set(form.id, form);
  }
  // Controls outside any form but tied to one with a form="id" attribute (oidc-provider's logout buttons).
  const outside = html.replace(formPattern, "");
  for (const [control, textareaAttributes, otherAttributes] of outside.matchAll(
    /<textarea\b([^>]*)>[\s\S]*?<\/textarea>|<(?:input|button)\b([^>]*)>/gi,
  )) {
    const owner = byId.get(parseAttributes(textareaAttributes ?? otherAttributes).form ?? "");
    if (owner) collectControls(control, owner);
  }
  return forms;
}

function collectControls(html: string, form: ParsedForm): void {
  const controls = /<textarea\b([^>]*)>([\s\S]*?)<\/textarea>|<(input|button)\b([^>]*)>/gi;
  for (const [, textareaAttributes, textareaBody, kind, attributeText] of html.matchAll(controls)) {
    const attributes = parseAttributes(textareaAttributes ?? attributeText);
    if (!attributes.name || "disabled" in attributes) continue;
    if (textareaAttributes !== undefined) {
      form.fields.push([attributes.name, decodeEntities(textareaBody)]);
      continue;
    }
    const type = (attributes.type ?? (kind.toLowerCase() === "button" ? "submit" : "text")).toLowerCase();
    if (type === "submit" || type === "image") form.buttons.push([attributes.name, attributes.value ?? ""]);
    else if (type === "button" || type === "reset" || type === "file") continue;
    else if ((type === "checkbox" || type === "radio") && !("checked" in attributes)) continue;
    else form.fields.push([attributes.name, attributes.value ?? (type === "checkbox" || type === "radio" ? "on" : "")]);
  }
}

function parseAttributes(text: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [, name, doubleQuoted, singleQuoted, bare] of text.matchAll(/([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    attributes[name.toLowerCase()] = decodeEntities(doubleQuoted ?? singleQuoted ?? bare ?? "");
  }
  return attributes;
}

function decodeEntities(text: string): string {
  return text
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, decimal: string) => String.fromCodePoint(Number(decimal)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}
