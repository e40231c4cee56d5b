import type { SubscribeResolverData } from "type-graphql";
import type { Actor } from "../../platform/security/actor";
import type { RequestContext } from "./context";
import { actorOf } from "./current-actor";

/**
 * The one way a subscription field listens: `@Subscription(() => T, { subscribe: listen((scope) => …) })`.
 * The function gets the request context, the authenticated caller and the field's arguments, typed,
 * checks what it must before anything is listened to (a chat is the caller's own, a filter parses),
 * and returns the bus' iterator for the topic (`services.events.subscribe(Topic.X, id)`).
 */
export function listen<Args = Record<string, never>>(
  subscribe: (scope: { context: RequestContext; actor: Actor; args: Args }) => AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>,
) {
  return ({ context, args }: SubscribeResolverData<unknown, Args, RequestContext>) => subscribe({ context, actor: actorOf(context), args });
}
