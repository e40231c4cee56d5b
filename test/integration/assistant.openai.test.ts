import { QueryTypes } from "sequelize";
import { OpenAIProvider } from "../../src/finance/assistant/openai.provider";
import { ToolRunner } from "../../src/finance/assistant/tools";
import { Topic } from "../../src/platform/events/catalogue";
import { FamilyVocabulary } from "../../src/finance/assistant/vocabulary";
import { JOBS, QueueName, replyJobOptions } from "../../workers/queues";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server";
import { replyTo, waitForReply } from "../helpers/chats";
import { createAccount, createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

/**
 * The openai provider, configured from settings alone, against a fake OpenAI-compatible server on
 * loopback: tool-call rounds over a streamed response, malformed tool arguments, 429 / 500 / timeout
 * (transient: retried with backoff), 401 (final at once), model choice, exactly-once replies and the
 * watchdog.
 */
let fake: FakeOpenAI;
let app: TestApp;
let user: TestUser;
let api: ReturnType<typeof apiKeyClient>;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  app = await startTestApp({
    roles: { workers: true },
    env: {
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: "sk-fake",
      ASSISTANT_MODEL: "fake-small",
      ASSISTANT_MODELS: "fake-small, fake-large",
      ASSISTANT_TIMEOUT_MS: "700",
      ASSISTANT_MAX_ATTEMPTS: "2",
      ASSISTANT_RETRY_DELAY_MS: "50",
      ASSISTANT_MAX_TOOL_ROUNDS: "3",
      ASSISTANT_REPLY_TIMEOUT_SECONDS: "60",
    },
  });
  user = await createUser(app.runtime.services, { aiEnabled: true });
  const account = await createAccount(app.runtime.services, user, { name: "Checking", balance: "1000" });
  await app.runtime.services.transactions.create(user.actor, {
    accountId: account.id,
    date: "2025-03-04",
    amount: "42.5",
    name: "Corner shop",
  });
  api = apiKeyClient(`${app.url}/api/v1`, user.key);
});
afterAll(async () => {
  await app.stop();
  await fake.close();
});
beforeEach(() => fake.reset());

async function post(content: string, model?: string) {
  const chat = await api.post("/chats", { title: "Test" });
  const message = await api.post(`/chats/${chat.body.id}/messages`, { content, ...(model ? { model } : {}) });
  expect(message.status).toBe(201);
  return { chatId: chat.body.id as string, messageId: message.body.id as string };
}

describe("the openai provider", () => {
  test("runs a streamed tool-call round and stores the answer with its tool calls", async () => {
    fake.script(
      { kind: "tool_calls", calls: [{ name: "get_transactions", arguments: '{"search":"corner","start_date":"2025-03-01"}' }] },
      { kind: "text", content: "You spent **$42.50** at the corner shop." },
    );
    const { chatId, messageId } = await post("What did I spend at the corner shop?");
    const partials: string[] = [];
    const events = app.runtime.services.events.subscribe(Topic.ChatEvent, chatId)[Symbol.asyncIterator]();
    const collecting = (async () => {
      for (;;) {
        const { value } = await events.next();
        if (value.kind === "partial") partials.push(value.delta);
        if (value.kind === "status" && value.status !== "pending") return value;
      }
    })();
    const detail = await waitForReply(api, chatId, messageId);
    expect(await collecting).toMatchObject({ status: "complete" });
    await events.return!();

    const reply = replyTo(detail, messageId);
    expect(reply).toMatchObject({ content: "You spent **$42.50** at the corner shop.", model: "fake-small" });
    expect(partials.join("")).toBe(reply.content);
    expect(reply.tool_calls).toEqual([
      expect.objectContaining({
        function_name: "get_transactions",
        function_arguments: { search: "corner", start_date: "2025-03-01" },
        function_result: expect.objectContaining({
          total_count: 1,
          totals: [
            { currency: "USD", income: "0", expense: "42.5", net: "-42.5", count: 1, first_date: "2025-03-04", last_date: "2025-03-04" },
          ],
        }),
      }),
    ]);

    const [first, second] = fake.requests;
    expect(first).toMatchObject({ model: "fake-small", stream: true });
    expect(first.tools.map((tool: any) => tool.function.name)).toEqual([
      "get_transactions",
      "summarize_transactions",
      "get_recurring_payments",
      "get_accounts",
      "get_balance_sheet",
      "get_income_statement",
      "get_balances_on",
      "get_net_worth_change",
      "get_recurring_transactions",
      "get_holdings",
      "summarize_trades",
    ]);
    expect(first.tools[0].function.parameters.properties.amount.properties.operator.enum).toContain("greater_than");
    expect(first.tools[0].function.parameters.properties.order.enum).toEqual(["newest", "oldest", "largest", "smallest"]);
    expect(first.tools[1].function.parameters.properties.group_by.enum).toEqual([
      "category",
      "merchant",
      "tag",
      "account",
      "month",
      "week",
    ]);
    // The system prompt: today's date, the family's currency and names, the transfer rule and the honesty rule.
    const system = first.messages[0];
    expect(system.role).toBe("system");
    expect(system.content).toContain(`Today is ${new Date().toISOString().slice(0, 10)}. The family currency is USD.`);
    expect(system.content).toContain("Transfers between the family's own accounts are neither income nor expense");
    expect(system.content).toMatch(/Honesty rule: .*say plainly what you could not find/s);
    expect(system.content).toContain("Accounts: Checking");
    expect(first.messages.at(-1)).toEqual({ role: "user", content: "What did I spend at the corner shop?" });
    const toolMessage = second.messages.at(-1);
    expect(toolMessage.role).toBe("tool");
    expect(JSON.parse(toolMessage.content).total_count).toBe(1);
  });

  test("malformed tool arguments are answered with an error the model can read, and stored as sent", async () => {
    fake.script({ kind: "tool_calls", calls: [{ name: "get_accounts", arguments: "{oops" }] }, { kind: "text", content: "Sorry." });
    const { chatId, messageId } = await post("Balances?");
    const reply = replyTo(await waitForReply(api, chatId, messageId), messageId);
    expect(reply.tool_calls[0]).toMatchObject({
      function_name: "get_accounts",
      function_arguments: { raw: "{oops" },
      function_result: { error: "Arguments are not a JSON object" },
    });
    expect(JSON.parse(fake.requests[1].messages.at(-1).content)).toEqual({ error: "Arguments are not a JSON object" });
  });

  test("tool rounds are bounded: the last round offers no tools", async () => {
    const call = { kind: "tool_calls" as const, calls: [{ name: "get_accounts", arguments: "{}" }] };
    fake.script(call, call, { kind: "text", content: "Done." });
    const { chatId, messageId } = await post("Loop forever");
    const reply = replyTo(await waitForReply(api, chatId, messageId), messageId);
    expect(reply.content).toBe("Done.");
    expect(reply.tool_calls).toHaveLength(2);
    expect(fake.requests.map((request) => Boolean(request.tools))).toEqual([true, true, false]);
  });

  test("a 429 is retried with backoff and the reply completes", async () => {
    fake.script({ kind: "status", status: 429 }, { kind: "text", content: "Second time lucky." });
    const { chatId, messageId } = await post("Hello");
    const detail = await waitForReply(api, chatId, messageId);
    expect(replyTo(detail, messageId).content).toBe("Second time lucky.");
    expect(fake.requests).toHaveLength(2);
  });

  test("a 500 on every attempt fails the reply with a friendly error; retry clears it and answers", async () => {
    fake.script({ kind: "status", status: 500 }, { kind: "status", status: 500 });
    const { chatId, messageId } = await post("Hello");
    const failed = await waitForReply(api, chatId, messageId);
    const sentence = "The AI service is temporarily unavailable. Please try again later.";
    expect(failed.messages[0]).toMatchObject({ ai_response_status: "failed", ai_response_message: sentence });
    expect(failed.error).toBe(sentence);
    expect((await api.get("/chats")).body.chats.find((c: { id: string }) => c.id === chatId).error).toBe(sentence);
    expect(fake.requests).toHaveLength(2);

    fake.script({ kind: "text", content: "Back again." });
    const retry = await api.post(`/chats/${chatId}/messages/retry`);
    expect(retry.status).toBe(202);
    expect(retry.body).toEqual({ message: "Retry initiated", message_id: messageId });
    const pending = await api.get(`/chats/${chatId}`);
    expect(pending.body.error).toBeNull();
    const done = await waitForReply(api, chatId, messageId);
    expect(done.messages[0].ai_response_status).toBe("complete");
    expect(replyTo(done, messageId).content).toBe("Back again.");
    expect(done.error).toBeNull();
  });

  test("a model server that never answers times out, is retried, then fails as unavailable", async () => {
    fake.script({ kind: "delay", ms: 5000 }, { kind: "delay", ms: 5000 });
    const { chatId, messageId } = await post("Hello");
    const failed = await waitForReply(api, chatId, messageId);
    expect(failed.error).toBe("The AI service is temporarily unavailable. Please try again later.");
    expect(fake.requests).toHaveLength(2);
  });

  test("a 401 is final at once: misconfigured, no retry", async () => {
    fake.script({ kind: "status", status: 401 });
    const { chatId, messageId } = await post("Hello");
    const failed = await waitForReply(api, chatId, messageId);
    expect(failed.error).toBe("The AI service is not configured correctly. Please ask your administrator to check the assistant settings.");
    expect(fake.requests).toHaveLength(1);
  });

  test("a 400 is final at once, with the generic sentence; a new message clears the chat's error", async () => {
    fake.script({ kind: "status", status: 400 });
    const { chatId, messageId } = await post("Hello");
    const failed = await waitForReply(api, chatId, messageId);
    expect(failed.error).toBe("Something went wrong while generating a response. Please try again.");
    const next = await api.post(`/chats/${chatId}/messages`, { content: "Again" });
    expect((await api.get(`/chats/${chatId}`)).body.error).toBeNull();
    await waitForReply(api, chatId, next.body.id);
  });

  test("a client may pick an allowed model, and no other", async () => {
    const { chatId, messageId } = await post("Hello", "fake-large");
    await waitForReply(api, chatId, messageId);
    expect(fake.requests[0].model).toBe("fake-large");
    const refused = await api.post(`/chats/${chatId}/messages`, { content: "hi", model: "gpt-5" });
    expect(refused.status).toBe(422);
    expect(refused.body.errors).toEqual(["Model gpt-5 is not available; choose one of fake-small, fake-large"]);
  });

  test("non-streaming responses work the same", async () => {
    fake.script(
      { kind: "tool_calls", calls: [{ name: "get_accounts", arguments: "{}" }] },
      { kind: "text", content: "You have one account." },
    );
    const provider = new OpenAIProvider({ ...app.runtime.config.assistant, stream: false });
    const { repositories } = app.runtime.services;
    const tools = new ToolRunner(
      { familyId: user.familyId, currency: "USD", today: "2025-03-31", vocabulary: new FamilyVocabulary([]) },
      { finance: repositories.finance, accounts: repositories.accounts },
    );
    const deltas: string[] = [];
    const answer = await provider.respond({
      model: "fake-small",
      history: [{ role: "user", content: "Accounts?" }],
      context: {
        currency: "USD",
        today: "2025-03-31",
        vocabulary: new FamilyVocabulary([{ kind: "account", id: user.familyId, name: "Checking" }]),
      },
      tools,
      onDelta: (text) => deltas.push(text),
    });
    expect(answer).toEqual({ content: "You have one account." });
    expect(fake.requests[0].stream).toBeFalsy();
    // Opened with 1000, then the 42.50 at the corner shop: the balance follows the ledger.
    expect(tools.calls[0].result).toEqual({
      accounts: [{ name: "Checking", type: "depository", classification: "asset", balance: "957.5", currency: "USD" }],
    });
  });
});

const replies = (messageId: string) =>
  app.runtime.sequelize.query<{ id: string }>("SELECT id FROM chat_messages WHERE reply_to_message_id = $1", {
    bind: [messageId],
    type: QueryTypes.SELECT,
  });

describe("exactly one reply", () => {
  test("enqueueing the same reply twice and running it again by hand still stores one reply", async () => {
    fake.script({ kind: "delay", ms: 300, then: { kind: "text", content: "Only once." } });
    const { chatId, messageId } = await post("Hello");
    const queue = app.runtime.queues.queue(QueueName.Assistant);
    const duplicate = await queue.add(JOBS[QueueName.Assistant].reply, { messageId, attempt: 1 }, replyJobOptions(messageId, 1, 2, 50));
    expect(duplicate.id).toBe(`reply-${messageId}-1`);
    const direct = app.runtime.services.assistant.reply(messageId, 1, true);
    const detail = await waitForReply(api, chatId, messageId);
    expect(["replied", "skipped"]).toContain(await direct);
    expect(await replies(messageId)).toHaveLength(1);
    expect(detail.messages.filter((m: { role: string }) => m.role === "assistant")).toHaveLength(1);
    expect(await app.runtime.services.assistant.reply(messageId, 1, true)).toBe("skipped");
  });

  test("the database refuses a second reply to the same message", async () => {
    const { chatId, messageId } = await post("Hello");
    await waitForReply(api, chatId, messageId);
    await expect(
      app.runtime.sequelize.query(
        `INSERT INTO chat_messages (id, chat_id, role, content, reply_to_message_id) VALUES (gen_random_uuid(), $1, 'assistant', 'again', $2)`,
        { bind: [chatId, messageId] },
      ),
    ).rejects.toMatchObject({ name: "SequelizeUniqueConstraintError", original: { constraint: "chat_messages_one_reply_key" } });
  });
});

describe("the watchdog", () => {
  test("is scheduled, and fails replies pending for longer than the configured time", async () => {
    const schedulers = await app.runtime.queues.queue(QueueName.Assistant).getJobSchedulers();
    expect(schedulers.map((scheduler) => scheduler.key)).toContain("expire-stale-replies-minutely");

    let answer!: () => void;
    fake.script({ kind: "gate", opened: new Promise<void>((resolve) => (answer = resolve)), then: { kind: "text", content: "Too late." } });
    const asked = fake.requests.length;
    const { chatId, messageId } = await post("Hello");
    await eventually(() => fake.requests.length > asked, { what: "the reply job to ask the model" });
    await app.runtime.sequelize.query("UPDATE chat_messages SET reply_requested_at = now() - interval '61 seconds' WHERE id = $1", {
      bind: [messageId],
    });
    expect(await app.runtime.services.assistant.expireStale()).toBe(1);
    const detail = await api.get(`/chats/${chatId}`);
    const sentence = "The AI response took too long and was abandoned. Please try again.";
    expect(detail.body.messages[0]).toMatchObject({ ai_response_status: "failed", ai_response_message: sentence });
    expect(detail.body.error).toBe(sentence);
    // The late answer loses to the watchdog: nothing is stored for the abandoned attempt.
    answer();
    await app.runtime.workers!.drain();
    expect(await replies(messageId)).toHaveLength(0);
  });
});
