import { ForbiddenError } from "../common/errors";
import type { ApiKeyScope } from "./api-key.model";
import type { UserRole } from "./user.model";

/** Who is making a request, resolved once per request from its credentials. */
export type Actor = Readonly<{
  userId: string;
  familyId: string;
  email: string;
  role: UserRole;
  scope: ApiKeyScope;
  aiEnabled: boolean;
  credential: { kind: "api_key"; id: string };
}>;

export function canWrite(actor: Actor): boolean {
  return actor.scope === "read_write";
}

export function insufficientScope(): ForbiddenError {
  return new ForbiddenError("This action requires the 'write' scope", "insufficient_scope");
}
