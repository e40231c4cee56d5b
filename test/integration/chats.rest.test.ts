import { replyTo, waitForReply } from "../helpers/chats";
import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

/**
 * The chat endpoints of docs/rest-compat.md, served with the built-in assistant (no model server configured)
 * and a worker in the same process.
 */
let app: TestApp;
let alice: TestUser;
let api: ReturnType<typeof apiKeyClient>;

beforeAll(async () => {
  app = await startTestApp({ roles: { workers: true } });
  alice = await createUser(app.runtime.services, { aiEnabled: true });
  api = apiKeyClient(`${app.url}/api/v1`, alice.key);
});
afterAll(() => app.stop());

async function newChat(title = "Budget questions") {
  const response = await api.post("/chats", { title });
  expect(response.status).toBe(201);
  return response.body;
}

describe("chats over REST", () => {
  test("a posted message answers 201 pending, and the reply arrives with its tool calls", async () => {
    const chat = await newChat();
    const posted = await api.post(`/chats/${chat.id}/messages`, { content: "What are my account balances?" });
    expect(posted.status).toBe(201);
    expect(posted.body).toEqual({
      id: expect.any(String),
      chat_id: chat.id,
      type: "user_message",
      role: "user",
      content: "What are my account balances?",
      model: "builtin",
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
      ai_response_status: "pending",
      ai_response_message: "AI response is being generated",
    });

    const detail = await waitForReply(api, chat.id, posted.body.id);
    const [user, reply] = detail.messages;
    expect(user).toMatchObject({ id: posted.body.id, ai_response_status: "complete", tool_calls: [] });
    expect(reply).toMatchObject({ type: "assistant_message", role: "assistant", model: "builtin", ai_response_status: null });
    expect(reply.content).toContain("You have no accounts yet.");
    expect(reply.tool_calls).toEqual([
      {
        id: expect.any(String),
        function_name: "get_accounts",
        function_arguments: {},
        function_result: { accounts: [] },
        created_at: expect.any(String),
      },
    ]);
    expect(detail).toMatchObject({ id: chat.id, title: "Budget questions", error: null });
    expect(detail.pagination).toEqual({ page: 1, per_page: 100, total_count: 2, total_pages: 1 });
  });

  test("lists chats newest first with message counts and the time of the newest message", async () => {
    const older = await newChat("Older");
    const newer = await newChat("Newer");
    const posted = await api.post(`/chats/${older.id}/messages`, { content: "Show my recent transactions" });
    const detail = await waitForReply(api, older.id, posted.body.id);
    const list = await api.get("/chats?per_page=2");
    expect(list.status).toBe(200);
    expect(list.body.chats.map((c: { id: string }) => c.id)).toEqual([newer.id, older.id]);
    expect(list.body.pagination).toMatchObject({ page: 1, per_page: 2 });
    const summary = list.body.chats[1];
    expect(Object.keys(summary).sort()).toEqual(["created_at", "error", "id", "last_message_at", "message_count", "title", "updated_at"]);
    expect(summary.message_count).toBe(2);
    expect(summary.last_message_at).toBe(detail.messages[1].created_at);
    expect(list.body.chats[0]).toMatchObject({ message_count: 0, last_message_at: null });
    expect((await api.get("/chats")).body.pagination.per_page).toBe(20);
  });

  test("chat detail pages messages oldest first, 50 by default", async () => {
    const chat = await newChat();
    const first = await api.post(`/chats/${chat.id}/messages`, { content: "hello there" });
    await waitForReply(api, chat.id, first.body.id);
    const second = await api.post(`/chats/${chat.id}/messages`, { content: "What is my net worth?" });
    await waitForReply(api, chat.id, second.body.id);
    const page = await api.get(`/chats/${chat.id}?per_page=3&page=1`);
    expect(page.body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(page.body.pagination).toEqual({ page: 1, per_page: 3, total_count: 4, total_pages: 2 });
    const last = await api.get(`/chats/${chat.id}?per_page=3&page=2`);
    expect(last.body.messages).toHaveLength(1);
    expect(last.body.messages[0].role).toBe("assistant");
    expect((await api.get(`/chats/${chat.id}`)).body.pagination.per_page).toBe(50);
  });

  test("the built-in assistant says plainly when it does not understand, and calls no tool", async () => {
    const chat = await newChat();
    const posted = await api.post(`/chats/${chat.id}/messages`, { content: "Write me a poem about the sea" });
    const reply = replyTo(await waitForReply(api, chat.id, posted.body.id), posted.body.id);
    expect(reply.content).toMatch(/^Sorry, I don't understand that question/);
    expect(reply.tool_calls).toEqual([]);
  });

  test("create takes a first message, titles the chat from it, and starts its reply", async () => {
    const response = await api.post("/chats", { message: "How much did I spend on groceries last month? I want to budget better." });
    expect(response.status).toBe(201);
    expect(response.body.title).toBe("How much did I spend on groceries last month? I want to…");
    expect(response.body.messages).toHaveLength(1);
    expect(response.body.messages[0]).toMatchObject({ role: "user", ai_response_status: "pending" });
    const detail = await waitForReply(api, response.body.id, response.body.messages[0].id);
    // This family has no groceries: the reply says so (it used to answer all spending), and names the
    // sentence it did not read.
    const content = replyTo(detail, response.body.messages[0].id).content;
    expect(content).toMatch(/^I couldn't find "groceries" among your categories, merchants, tags or accounts/);
    expect(content).toContain('I left out "I want to budget better."');
    expect(content).not.toMatch(/\$\d/);
    expect((await api.post("/chats", {})).status).toBe(422);
  });

  test("rename answers the detail; an empty title is a 422", async () => {
    const chat = await newChat();
    const renamed = await api.patch(`/chats/${chat.id}`, { title: "Renamed" });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: chat.id, title: "Renamed", messages: [], pagination: { total_count: 0 } });
    const empty = await api.patch(`/chats/${chat.id}`, { title: "  " });
    expect(empty.status).toBe(422);
    expect(empty.body).toMatchObject({ error: "validation_failed", errors: ["Title can't be blank"] });
  });

  test("delete answers 204 with no body, and the chat is gone", async () => {
    const chat = await newChat();
    const deleted = await api.delete(`/chats/${chat.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe("");
    expect((await api.get(`/chats/${chat.id}`)).status).toBe(404);
  });

  test("a message needs content, and a model the server offers", async () => {
    const chat = await newChat();
    const blank = await api.post(`/chats/${chat.id}/messages`, { content: "" });
    expect(blank.status).toBe(422);
    expect(blank.body.errors).toEqual(["Content can't be blank"]);
    const model = await api.post(`/chats/${chat.id}/messages`, { content: "hi", model: "gpt-4o" });
    expect(model.status).toBe(422);
    expect(model.body.errors).toEqual(["Model gpt-4o is not available; choose one of builtin"]);
    expect((await api.post(`/chats/${chat.id}/messages`, "[1]")).status).toBe(400);
  });

  test("retry after a good reply regenerates it with 202, as upstream: the chat ends with exactly one new reply", async () => {
    const chat = await newChat();
    const posted = await api.post(`/chats/${chat.id}/messages`, { content: "What is my net worth?" });
    const answered = await waitForReply(api, chat.id, posted.body.id);
    const first = replyTo(answered, posted.body.id);
    expect(first).toBeDefined();

    const retry = await api.post(`/chats/${chat.id}/messages/retry`);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ message: "Retry initiated", message_id: posted.body.id });

    const regenerated = await waitForReply(api, chat.id, posted.body.id);
    const second = replyTo(regenerated, posted.body.id);
    expect(second.id).not.toBe(first.id);
    expect(second.content).toBe(first.content);
    expect(regenerated.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(regenerated.messages[0].ai_response_status).toBe("complete");
  });

  test("retry is a 422 while the reply is still being written, and in a chat with no message", async () => {
    const empty = await newChat();
    const none = await api.post(`/chats/${empty.id}/messages/retry`);
    expect(none.status).toBe(422);
    expect(none.body.errors).toEqual(["The last message has no reply to retry yet"]);
    // A message whose reply is pending: stop the worker from answering by asking the service directly, then retry.
    const chat = await newChat();
    const messageId = (await app.runtime.services.chats.postMessage(alice.actor, chat.id, { content: "hi" })).id;
    await app.runtime.sequelize.query("UPDATE chat_messages SET ai_response_status = 'pending', reply_attempt = 99 WHERE id = $1", {
      bind: [messageId],
    });
    const pending = await api.post(`/chats/${chat.id}/messages/retry`);
    expect(pending.status).toBe(422);
  });

  test("a read-only key can read chats but not write them", async () => {
    const reader = apiKeyClient(`${app.url}/api/v1`, alice.readKey);
    expect((await reader.get("/chats")).status).toBe(200);
    const refused = await reader.post("/chats", { title: "no" });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe("insufficient_scope");
  });
});

describe("chat access", () => {
  test("without the AI feature every chat endpoint answers 403 feature_disabled", async () => {
    const plain = await createUser(app.runtime.services);
    const client = apiKeyClient(`${app.url}/api/v1`, plain.key);
    const chat = await newChat();
    for (const response of [
      await client.get("/chats"),
      await client.get(`/chats/${chat.id}`),
      await client.post("/chats", { title: "x" }),
      await client.patch(`/chats/${chat.id}`, { title: "x" }),
      await client.delete(`/chats/${chat.id}`),
      await client.post(`/chats/${chat.id}/messages`, { content: "hi" }),
      await client.post(`/chats/${chat.id}/messages/retry`),
    ]) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: "feature_disabled", message: "AI features are not enabled for this user" });
    }
  });

  test("another user's chat is a 404, even in the same family", async () => {
    const chat = await newChat();
    const sibling = await createUser(app.runtime.services, { familyOf: alice, aiEnabled: true });
    const other = apiKeyClient(`${app.url}/api/v1`, sibling.key);
    expect((await other.get(`/chats/${chat.id}`)).status).toBe(404);
    expect((await other.patch(`/chats/${chat.id}`, { title: "mine" })).status).toBe(404);
    expect((await other.delete(`/chats/${chat.id}`)).status).toBe(404);
    expect((await other.post(`/chats/${chat.id}/messages`, { content: "hi" })).status).toBe(404);
    expect((await other.post(`/chats/${chat.id}/messages/retry`)).status).toBe(404);
    expect((await other.get("/chats")).body.chats).toEqual([]);
    expect((await api.get(`/chats/not-a-uuid`)).status).toBe(404);
  });
});
