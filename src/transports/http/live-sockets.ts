import { CloseCode } from "graphql-ws";
import type { WebSocket } from "ws";
import { Topic, type AccessEnded } from "../../platform/events/catalogue";
import type { Logger } from "../../platform/common/logger";
import type { EventBus } from "../../platform/events/event-bus";
import type { Actor } from "../../platform/security/actor";

/**
 * The authenticated WebSocket connections of this process, each with the actor its credential
 * resolved to when it connected. A connection is authorised once, so when that credential stops
 * working (or starts granting something else) the connection must close: this listens for
 * `auth.access.ended` on the event bus, which reaches every API process, and closes the matching sockets.
 *
 * Close codes: 4401 Unauthorized when the credential no longer authenticates (user suspended or
 * deleted, session ended, token or key revoked, and at the moment a key, token or session expires:
 * graphql-ws clients do not retry it), 4403 Forbidden
 * when the user's role changed (graphql-ws clients reconnect, and the new connection has the new role).
 */
export class LiveSockets {
  private readonly sockets = new Map<WebSocket, Actor>();
  /** Open connections per credential, to cap them. */
  private readonly perCredential = new Map<string, number>();
  private listening: AsyncIterator<unknown> | null = null;

  constructor(private readonly logger: Logger) {}

  /** How many connections this credential holds open in this process. */
  count(actor: Actor): number {
    return this.perCredential.get(credentialKey(actor)) ?? 0;
  }

  add(socket: WebSocket, actor: Actor): void {
    if (socket.readyState !== socket.OPEN) return;
    this.sockets.set(socket, actor);
    const key = credentialKey(actor);
    this.perCredential.set(key, this.count(actor) + 1);
    // A credential is checked once, at connection: its own end of life must close the socket, or it would outlive it.
    let expiry: NodeJS.Timeout | undefined;
    const expiresAt = actor.expiresAt?.getTime();
    const arm = () => {
      if (expiresAt === undefined) return;
      const delay = expiresAt - Date.now();
      // Timers hold at most about 24.8 days; a later expiry re-arms.
      expiry = delay > MAX_TIMER_MS ? setTimeout(arm, MAX_TIMER_MS) : setTimeout(() => this.expire(socket), Math.max(0, delay));
    };
    arm();
    socket.once("close", () => {
      clearTimeout(expiry);
      this.sockets.delete(socket);
      const left = (this.perCredential.get(key) ?? 1) - 1;
      if (left > 0) this.perCredential.set(key, left);
      else this.perCredential.delete(key);
    });
  }

  private expire(socket: WebSocket): void {
    if (!this.sockets.delete(socket)) return;
    socket.close(CloseCode.Unauthorized, "Credentials expired");
  }

  /** Starts closing sockets as access-ended messages arrive; stop with `stop()`. */
  listen(events: EventBus): void {
    const iterator = events.subscribe(Topic.AccessEnded)[Symbol.asyncIterator]();
    this.listening = iterator;
    void (async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        this.close(next.value);
      }
    })();
  }

  async stop(): Promise<void> {
    await this.listening?.return?.();
    this.listening = null;
  }

  /** Closes every socket whose credential the message covers; returns how many. */
  close(message: AccessEnded): number {
    const [code, reason] =
      message.kind === "user" && message.reason === "role_changed"
        ? [CloseCode.Forbidden, "Role changed"]
        : [CloseCode.Unauthorized, "Credentials no longer valid"];
    let closed = 0;
    for (const [socket, actor] of this.sockets) {
      if (!matches(actor, message)) continue;
      this.sockets.delete(socket);
      socket.close(code, reason);
      closed += 1;
    }
    if (closed) this.logger.info({ kind: message.kind, reason: message.reason, closed }, "closed WebSocket connections");
    return closed;
  }
}

const MAX_TIMER_MS = 2 ** 31 - 1;

function credentialKey(actor: Actor): string {
  return `${actor.credential.kind}:${actor.credential.id}`;
}

function matches(actor: Actor, message: AccessEnded): boolean {
  const { credential } = actor;
  switch (message.kind) {
    case "user":
      return actor.userId === message.userId;
    case "session":
      return credential.kind !== "api_key" && credential.sessionId === message.sessionId;
    case "access_token":
      return credential.kind === "access_token" && credential.id === message.tokenId;
    case "api_key":
      return credential.kind === "api_key" && credential.id === message.apiKeyId;
  }
}
