import type { AccountRow } from "../../src/finance/accounts/account.repository";
import type { Actor } from "../../src/platform/security/actor";
import type { Services } from "../../src/app/services";

let sequence = 0;

export type TestUser = {
  userId: string;
  familyId: string;
  email: string;
  /** read_write key. */
  key: string;
  readKey: string;
  actor: Actor;
};

/** A user in a new family (or in `familyOf`'s family) with a read_write and a read key. */
export async function createUser(
  services: Services,
  options: { familyOf?: TestUser; currency?: string; role?: string; aiEnabled?: boolean } = {},
): Promise<TestUser> {
  sequence += 1;
  const email = `user${sequence}-${Date.now()}@example.test`;
  const user = await services.users.create({
    email,
    familyOfEmail: options.familyOf?.email,
    currency: options.currency,
    role: options.role,
    aiEnabled: options.aiEnabled,
  });
  const key = (await services.apiKeys.create(user.id, { scope: "read_write" })).plaintext;
  const readKey = (await services.apiKeys.create(user.id, { scope: "read" })).plaintext;
  return { userId: user.id, familyId: user.familyId, email, key, readKey, actor: await services.apiKeys.authenticate(key) };
}

export function createAccount(
  services: Services,
  user: TestUser,
  input: { name?: string; accountType?: string; currency?: string; balance?: string } = {},
): Promise<AccountRow> {
  return services.accounts.create(user.actor, { name: "Checking", accountType: "depository", currency: "USD", ...input });
}
