import { eventually } from "../helpers/eventually";
import type { Page } from "playwright-core";
import { failLogin, startConsoleRig, type ConsoleRig } from "../helpers/console";

let rig: ConsoleRig;
let apiKey: string;

beforeAll(async () => {
  rig = await startConsoleRig({ RATE_LIMIT_REQUESTS: "0" });
  apiKey = (await rig.app.runtime.services.apiKeys.create(rig.admin.id, { scope: "read", name: "explorer" })).plaintext;
  await failLogin(rig.app.url, "someone@example.test", "10.4.4.4");
}, 60_000);
afterAll(() => rig?.stop());

/** Replaces the text of one of GraphiQL's editors (CodeMirror) as pasting would; run at once, as a hurried user does. */
async function replaceEditorText(page: Page, editor: string, text: string) {
  await page.locator(`${editor} .CodeMirror:visible`).click();
  await page.keyboard.press("ControlOrMeta+a");
  await page.keyboard.insertText(text);
}

test("the explorer at /graphql runs a query and a subscription with an API key (no session), and asks nothing beyond the service", async () => {
  const { context, page, foreign } = await rig.open();
  const sent = { httpKeys: [] as Array<string | undefined>, cookies: [] as Array<string | undefined>, socketInits: [] as string[] };
  page.on("request", (request) => {
    if (new URL(request.url()).pathname !== "/graphql" || request.method() !== "POST") return;
    sent.httpKeys.push(request.headers()["x-api-key"]);
    sent.cookies.push(request.headers()["cookie"]);
  });
  page.on("websocket", (socket) =>
    socket.on("framesent", ({ payload }) => String(payload).includes("connection_init") && sent.socketInits.push(String(payload))),
  );
  try {
    // docs/graphql.md's URL, opened without signing in to the console: no session cookie exists in this context.
    const schemaLoaded = page.waitForResponse((answer) => Boolean(answer.request().postData()?.includes("IntrospectionQuery")));
    await page.goto("/graphql");
    await schemaLoaded;
    expect(await context.cookies()).toEqual([]);

    await page.getByRole("button", { name: "Headers" }).click();
    await replaceEditorText(page, ".graphiql-editor-tool", JSON.stringify({ "X-Api-Key": apiKey }));
    await page.getByRole("button", { name: /Execute query/ }).click();
    const result = page.locator(".result-window");
    await eventually(async () => expect(await result.textContent()).toContain("10.4.4.4"));
    expect(await result.textContent()).toContain(rig.admin.email);
    expect(sent.httpKeys.at(-1)).toBe(apiKey);

    await replaceEditorText(page, ".graphiql-query-editor", "subscription Live { auditEventRecorded { eventType ipAddress } }");
    await page.getByRole("button", { name: /Execute query/ }).click();
    // The subscription is live once the socket has carried the key; then an event is recorded elsewhere.
    await eventually(() => expect(sent.socketInits.some((frame) => frame.includes(apiKey))).toBe(true));
    await eventually(async () => {
      await failLogin(rig.app.url, "later@example.test", "10.9.8.7");
      await eventually(async () => expect(await result.textContent()).toContain("10.9.8.7"), { timeout: 2_000 });
    });
    expect(await result.textContent()).toContain("auth.login.failed");

    expect(sent.cookies.filter(Boolean)).toEqual([]);
    expect(foreign).toEqual([]);
  } finally {
    await context.close();
  }
});
