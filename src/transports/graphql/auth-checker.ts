import type { AuthChecker } from "type-graphql";
import { ForbiddenError, UnauthenticatedError } from "../../platform/common/errors";
import { canAdminister, canReadAudit, canWrite, insufficientScope } from "../../platform/security/actor";
import { accessRuleOf } from "./access-rules";
import type { RequestContext } from "./context";

/**
 * Enforces a root field's rule from ACCESS_RULES. Fields mark themselves `@Authorized()` without roles:
 * the table is the one place that says who may call what. A field without a rule is refused.
 */
export const authChecker: AuthChecker<RequestContext> = ({ context, info }) => {
  const rule = accessRuleOf(info.parentType.name, info.fieldName);
  if (!rule) throw new Error(`no access rule is declared for ${info.parentType.name}.${info.fieldName}`);
  const { actor } = context;
  if (!actor) throw new UnauthenticatedError();
  if ((rule === "write" || rule === "auditWrite" || rule === "adminWrite") && !canWrite(actor)) throw insufficientScope();
  if ((rule === "audit" || rule === "auditWrite") && !canReadAudit(actor)) {
    throw new ForbiddenError("The audit log is open to administrators and auditors only", "forbidden");
  }
  if ((rule === "admin" || rule === "adminWrite") && !canAdminister(actor)) {
    throw new ForbiddenError("This action is open to administrators only", "forbidden");
  }
  return true;
};
