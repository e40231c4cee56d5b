import type { AuthChecker } from "type-graphql";
import { UnauthenticatedError } from "../common/errors";
import { canWrite, insufficientScope } from "../identity/actor";
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
    throw insufficientScope();
  }
  return true;
};
