/**
 * auditUserLookup: how auditors (and administrators) pick users by e-mail for reports, exports and the
 * audit log's user filter. Auditors find members of their own family only, by the start of the e-mail
 * (or a pasted id); administrators find anyone; deleted accounts never; only id, e-mail and name.
 */
import { graphqlClient, useGraphqlApp, validationFailed, type Gql, type Json } from "../helpers/graphql";

const { app } = useGraphqlApp();
const LOOKUP = `query($prefix: String!, $limit: Int) { auditUserLookup(emailPrefix: $prefix, limit: $limit) { id email name } }`;
const stamp = Date.now();
const email = (local: string) => `${local}.${stamp}@lookup.example`;

let auditor: Gql;
let admin: Gql;
let member: Gql;
const ids: Record<string, string> = {};

async function user(local: string, options: { role?: string; familyOfEmail?: string; name?: string } = {}) {
  const created = await app().runtime.services.users.create({ email: email(local), ...options });
  ids[local] = created.id;
  return created;
}
const keyOf = async (id: string) => (await app().runtime.services.apiKeys.create(id, { scope: "read" })).plaintext;

beforeAll(async () => {
  await user("audrey", { role: "auditor", name: "Audrey Auditor" });
  // Her family: two members whose addresses share a start, one with a LIKE wildcard in it, one deleted later.
  await user("bob.smith", { familyOfEmail: email("audrey"), name: "Bob Smith" });
  await user("bob_jones", { familyOfEmail: email("audrey") });
  await user("bobby", { familyOfEmail: email("audrey") });
  // Another family's member and administrator.
  await user("bob.other", {});
  await user("root", { role: "admin", familyOfEmail: email("bob.other") });
  await user("mallory", { familyOfEmail: email("audrey") });
  auditor = graphqlClient(app(), await keyOf(ids.audrey));
  admin = graphqlClient(app(), await keyOf(ids.root));
  member = graphqlClient(app(), await keyOf(ids["bob.smith"]));
  const actor = await app().runtime.services.apiKeys.authenticate(await keyOf(ids.root));
  await app().runtime.services.userAdmin.delete(actor, ids.bobby);
});

const emails = (data: Json): string[] => (data.auditUserLookup as Array<{ email: string }>).map((found) => found.email);

test("an auditor finds the members of their family whose e-mail begins with what they typed, and no one else", async () => {
  const found = await auditor.ok(LOOKUP, { prefix: "BOB" });
  // The other family's bob and the deleted bobby are left out (the order is the database's collation of e-mails).
  const byEmail = (a: { email: string }, b: { email: string }) => (a.email < b.email ? -1 : 1);
  expect([...found.auditUserLookup].sort(byEmail)).toEqual([
    { id: ids["bob.smith"], email: email("bob.smith"), name: "Bob Smith" },
    { id: ids.bob_jones, email: email("bob_jones"), name: null },
  ]);
  // A prefix, not a substring; `_` and `%` are literal.
  expect(emails(await auditor.ok(LOOKUP, { prefix: "smith" }))).toEqual([]);
  expect(emails(await auditor.ok(LOOKUP, { prefix: "bob_" }))).toEqual([email("bob_jones")]);
  expect(emails(await auditor.ok(LOOKUP, { prefix: "b%b" }))).toEqual([]);
  expect(emails(await auditor.ok(LOOKUP, { prefix: "bob", limit: 1 }))).toHaveLength(1);
});

test("a pasted id finds that user, within the same bounds", async () => {
  expect(emails(await auditor.ok(LOOKUP, { prefix: ids["bob.smith"] }))).toEqual([email("bob.smith")]);
  expect(emails(await auditor.ok(LOOKUP, { prefix: ids["bob.other"] }))).toEqual([]);
  expect(emails(await auditor.ok(LOOKUP, { prefix: ids.bobby }))).toEqual([]);
  expect(emails(await admin.ok(LOOKUP, { prefix: ids["bob.smith"] }))).toEqual([email("bob.smith")]);
});

test("an administrator finds anyone but the deleted", async () => {
  expect(emails(await admin.ok(LOOKUP, { prefix: "bob" })).sort()).toEqual(
    [email("bob.other"), email("bob.smith"), email("bob_jones")].sort(),
  );
});

test("members may not look users up; a prefix shorter than two characters or a limit out of range is invalid input", async () => {
  expect(await member.fail(LOOKUP, { prefix: "bob" })).toMatchObject({ extensions: expect.objectContaining({ code: "FORBIDDEN" }) });
  expect(await auditor.fail(LOOKUP, { prefix: " b " })).toMatchObject(validationFailed("Email prefix must be at least 2 characters"));
  expect(await auditor.fail(LOOKUP, { prefix: "bob", limit: 21 })).toMatchObject(validationFailed("Limit must be between 1 and 20"));
});
