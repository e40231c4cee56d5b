import { createParameterDecorator } from "type-graphql";
import type { Actor } from "../../platform/security/actor";
import { UnauthenticatedError } from "../../platform/common/errors";
import type { RequestContext } from "./context";

/**
 * The authenticated caller of a resolver, as a parameter: `@CurrentActor() actor: Actor`. Fields that
 * take it are `@Authorized`, so the auth checker has already refused anonymous callers; the check here
 * keeps that promise in the type (no `actor!` in resolvers) should a field ever lose its `@Authorized`.
 */
export function CurrentActor() {
  return createParameterDecorator<RequestContext>(({ context }) => actorOf(context));
}

/** The same for code that gets the context itself, such as a subscription's `subscribe` function. */
export function actorOf(context: RequestContext): Actor {
  if (!context.actor) throw new UnauthenticatedError();
  return context.actor;
}
