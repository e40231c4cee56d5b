import type { AuthChecker } from "type-graphql";
import { ForbiddenError, UnauthenticatedError } from "../../platform/common/errors";
import { canAdminister, canReadAudit, canWrite, insufficientScope } from "../../platform/security/actor";
import type { RequestContext } from "./context";

/** What a root field needs: `@Authorized(Access.Read)`, `Access.Write`, `Access.Audit` or `Access.Admin`. */
export enum Access {
  Read = "read",
  Write = "write",
  /** The audit log: administrators and auditors only, whatever the credential's scope. */
  Audit = "audit",
  /** Instance administration (users, SSO providers): administrators only, with a read_write credential for changes. */
  Admin = "admin",
}

export const authChecker: AuthChecker<RequestContext, Access> = ({ context }, required) => {
  const { actor } = context;
  if (!actor) throw new UnauthenticatedError();
  if (required.includes(Access.Write) && !canWrite(actor)) {
    throw insufficientScope();
  }
  if (required.includes(Access.Audit) && !canReadAudit(actor)) {
    throw new ForbiddenError("The audit log is open to administrators and auditors only", "forbidden");
  }
  if (required.includes(Access.Admin) && !canAdminister(actor)) {
    throw new ForbiddenError("This action is open to administrators only", "forbidden");
  }
  return true;
};
