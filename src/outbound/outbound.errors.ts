/**
 * Why the outbound guard would not send a request: the URL or the address it resolves to is not one
 * the service may reach. Callers turn this into a validation error (configuration time) or a failed
 * delivery (send time); the message names the problem without secrets (no query string, no userinfo).
 */
export class OutboundRefusedError extends Error {
  constructor(
    readonly reason: "url" | "scheme" | "address" | "resolve" | "redirect",
    message: string,
  ) {
    super(message);
    this.name = "OutboundRefusedError";
  }
}

/** The request was allowed but did not complete: no connection in time, no full answer in time, an answer too large, a network error. */
export class OutboundFailedError extends Error {
  constructor(
    readonly reason: "connect_timeout" | "timeout" | "too_large" | "network" | "aborted",
    message: string,
  ) {
    super(message);
    this.name = "OutboundFailedError";
  }
}
