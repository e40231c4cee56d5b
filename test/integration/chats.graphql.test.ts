import { createUser, type TestUser } from "../helpers/fixtures";
import { apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";
import { eventually } from "../helpers/eventually";

/**
 * The chat operations over POST /graphql (REST runs the same operations through the adapter; this is
 * the GraphQL clients' view): create, post, poll the reply, rename, retry refused, delete, errors.
 */
let app: TestApp;
let alice: TestUser;
let gql: (query: string, variables?: Record<string, unknown>) => Promise<any>;

beforeAll(async () => {
  app = await startTestApp({ roles: { workers: true } });
  alice = await createUser(app.runtime.services, { aiEnabled: true });
  const api = apiKeyClient(app.url, alice.key);
  gql = async (query, variables) => (await api.graphql(query, variables)).body;
});
afterAll(() => app.stop());

const CHAT = `query($id: ID!) { chat(id: $id) { id title error messageCount messages { id role type content aiResponseStatus toolCalls { functionName } } } }`;

async function waitUntilAnswered(chatId: string, messageId: string): Promise<any> {
  return eventually(
    async () => {
      const { data } = await gql(CHAT, { id: chatId });
      const message = data.chat.messages.find((m: { id: string }) => m.id === messageId);
      return message.aiResponseStatus !== "pending" && data.chat;
    },
    { what: "the reply" },
  );
}

test("a chat is created, answered, renamed, listed and deleted through GraphQL", async () => {
  const created = await gql(`mutation { createChat(input: { title: "Money talk" }) { id title messageCount } }`);
  expect(created.data.createChat).toMatchObject({ title: "Money talk", messageCount: 0 });
  const chatId = created.data.createChat.id;

  const posted = await gql(
    `mutation($chatId: ID!) { createChatMessage(chatId: $chatId, input: { content: "What is my net worth?" }) { id role aiResponseStatus aiResponseMessage } }`,
    { chatId },
  );
  expect(posted.data.createChatMessage).toMatchObject({
    role: "user",
    aiResponseStatus: "pending",
    aiResponseMessage: "AI response is being generated",
  });

  const answered = await waitUntilAnswered(chatId, posted.data.createChatMessage.id);
  expect(answered.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
  expect(answered.messages[0].aiResponseStatus).toBe("complete");
  expect(answered.messages[1].toolCalls.map((call: { functionName: string }) => call.functionName)).toContain("get_balance_sheet");

  const renamed = await gql(`mutation($id: ID!) { updateChat(id: $id, input: { title: "Net worth" }) { title } }`, { id: chatId });
  expect(renamed.data.updateChat.title).toBe("Net worth");

  // Retrying a good reply regenerates it, as upstream does: one new reply replaces the old one.
  const retry = await gql(`mutation($chatId: ID!) { retryChatReply(chatId: $chatId) { messageId } }`, { chatId });
  expect(retry.data.retryChatReply.messageId).toBe(posted.data.createChatMessage.id);
  const regenerated = await waitUntilAnswered(chatId, posted.data.createChatMessage.id);
  expect(regenerated.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
  expect(regenerated.messages[1].id).not.toBe(answered.messages[1].id);

  const listed = await gql(`{ chats { items { id title messageCount } pagination { totalCount } } }`);
  expect(listed.data.chats.items).toEqual([{ id: chatId, title: "Net worth", messageCount: 2 }]);

  expect((await gql(`mutation($id: ID!) { deleteChat(id: $id) { id } }`, { id: chatId })).data.deleteChat.id).toBe(chatId);
  expect((await gql(CHAT, { id: chatId })).errors[0].extensions.code).toBe("NOT_FOUND");
});

test("GraphQL applies the same rules as REST: empty titles, other users' chats and the AI feature flag", async () => {
  const { data } = await gql(`mutation { createChat(input: { title: "Mine" }) { id } }`);
  const emptyTitle = await gql(`mutation($id: ID!) { updateChat(id: $id, input: { title: "  " }) { id } }`, { id: data.createChat.id });
  expect(emptyTitle.errors[0].extensions.code).toBe("VALIDATION_FAILED");

  const bob = await createUser(app.runtime.services, { familyOf: alice, aiEnabled: true });
  const asBob = await apiKeyClient(app.url, bob.key).graphql(CHAT, { id: data.createChat.id });
  expect(asBob.body.errors[0].extensions.code).toBe("NOT_FOUND");

  const carol = await createUser(app.runtime.services);
  const disabled = await apiKeyClient(app.url, carol.key).graphql(`{ chats { items { id } } }`);
  expect(disabled.body.errors[0]).toMatchObject({
    message: "AI features are not enabled for this user",
    extensions: { code: "FORBIDDEN" },
  });
});
