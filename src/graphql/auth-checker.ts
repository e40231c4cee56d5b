import type { AuthChecker } from "type-graphql";
import { ForbiddenError, UnauthenticatedError } from "../common/errors";
import { canWrite } from "../identity/actor";
import type { RequestContext } from "./context";

/** What a root field needs: `@Authorized(Access.Read)` or `@Authorized(Access.Write)`. */
export enum Access {
  Read = "read",
  Write = "write",
}

export const authChecker: AuthChecker<RequestContext, Access> = ({ context }, required) => {
  const { actor } = context;
  if (!actor) throw new UnauthenticatedError();
  if (required.includes(Access.Write) && !canWrite(actor)) {
    throw new ForbiddenError("This action requires the 'write' scope", "insufficient_scope");
  }
  return true;
};
