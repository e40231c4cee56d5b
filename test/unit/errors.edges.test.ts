import http from "node:http";
import type { AddressInfo } from "node:net";
import express from "express";
import { graphqlExtensionsOf, INTERNAL_REST_ERROR, restErrorOf } from "../../src/platform/common/error-edges";
import {
  BadRequestError,
  ConflictError,
  type DomainError,
  ErrorCode,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  OutboundFailedError,
  OutboundRefusedError,
  PayloadTooLargeError,
  QueryTimeoutError,
  RateLimitedError,
  ServiceUnavailableError,
  UnauthenticatedError,
  UpstreamUnavailableError,
  ValidationError,
} from "../../src/platform/common/errors";
import { createLogger } from "../../src/platform/common/logger";
import { SsoLoginError } from "../../src/audit/sso/sso-login.errors";
import { finalErrorHandler, noRouteHandler } from "../../src/transports/http/respond";
import { client } from "../helpers/http";

/** One error of every code, with the REST status and body docs/rest-compat.md gives it. */
const EVERY_CODE: Record<ErrorCode, { error: DomainError; status: number; restError: string }> = {
  [ErrorCode.BadRequest]: { error: new BadRequestError("bad"), status: 400, restError: "bad_request" },
  [ErrorCode.Unauthenticated]: { error: new UnauthenticatedError(), status: 401, restError: "unauthorized" },
  [ErrorCode.Forbidden]: { error: new ForbiddenError("no", "insufficient_scope"), status: 403, restError: "insufficient_scope" },
  [ErrorCode.NotFound]: { error: new NotFoundError("Account"), status: 404, restError: "not_found" },
  [ErrorCode.MethodNotAllowed]: {
    error: new MethodNotAllowedError("PUT is not allowed here"),
    status: 405,
    restError: "method_not_allowed",
  },
  [ErrorCode.Conflict]: { error: new ConflictError("taken"), status: 409, restError: "conflict" },
  [ErrorCode.PayloadTooLarge]: { error: new PayloadTooLargeError("too big"), status: 413, restError: "payload_too_large" },
  [ErrorCode.ValidationFailed]: { error: new ValidationError(["Name can't be blank"]), status: 422, restError: "validation_failed" },
  [ErrorCode.RateLimited]: {
    error: new RateLimitedError("slow down", { details: { reset_in_seconds: 3 } }),
    status: 429,
    restError: "rate_limit_exceeded",
  },
  [ErrorCode.UpstreamUnavailable]: { error: new UpstreamUnavailableError("bank down"), status: 503, restError: "upstream_unavailable" },
  [ErrorCode.UpstreamFailed]: {
    error: new SsoLoginError("token_exchange_failed", "the token endpoint answered 500"),
    status: 502,
    restError: "sso_login_failed",
  },
  [ErrorCode.QueryTimeout]: { error: new QueryTimeoutError(), status: 503, restError: "query_timeout" },
  [ErrorCode.ServiceUnavailable]: { error: new ServiceUnavailableError(), status: 503, restError: "service_unavailable" },
};

describe("the error edges", () => {
  test.each(Object.values(ErrorCode))("%s has one REST status and body and one GraphQL extensions", (code) => {
    const { error, status, restError } = EVERY_CODE[code];
    expect(error.code).toBe(code);
    const rest = restErrorOf(error);
    expect(rest.status).toBe(status);
    expect(rest.body).toEqual({
      error: restError,
      ...error.restFields,
      message: error.message,
      ...(error.errors ? { errors: error.errors } : {}),
      ...(error.details ? { details: error.details } : {}),
    });
    expect(graphqlExtensionsOf(error)).toEqual({ code, restError, errors: error.errors, details: error.details });
  });

  test("the outbound guard's refusal is a 422 naming the URL's problem; a request that did not complete is a 503", () => {
    const refused = new OutboundRefusedError("address", "must not point at a loopback address (127.0.0.1 not allowed)");
    expect(restErrorOf(refused)).toEqual({
      status: 422,
      body: {
        error: "outbound_refused",
        message: refused.message,
        errors: ["Url must not point at a loopback address (127.0.0.1 not allowed)"],
      },
    });
    expect(graphqlExtensionsOf(refused)).toMatchObject({ code: "VALIDATION_FAILED", restError: "outbound_refused" });
    expect(refused.reason).toBe("address");
    const failed = new OutboundFailedError("timeout", "no complete answer from hooks.example.com in time");
    expect(restErrorOf(failed)).toEqual({ status: 503, body: { error: "upstream_unavailable", message: failed.message } });
    expect(graphqlExtensionsOf(failed)).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", restError: "upstream_unavailable" });
    expect(failed).toMatchObject({ name: "OutboundFailedError", reason: "timeout" });
  });

  test("anything that is not a domain error leaves as a bare internal error on both edges", () => {
    const fault = new Error("connection string with a password in it");
    expect(restErrorOf(fault)).toEqual(INTERNAL_REST_ERROR);
    expect(JSON.stringify(restErrorOf(fault))).not.toContain("password");
    expect(graphqlExtensionsOf(fault)).toEqual({ code: "INTERNAL_SERVER_ERROR" });
  });

  test("a PostgreSQL data exception (a value the client sent) is a validation failure on both edges", () => {
    const outOfRange = Object.assign(new Error("numeric field overflow"), { parent: { code: "22003" } });
    expect(restErrorOf(outOfRange).status).toBe(422);
    expect(graphqlExtensionsOf(outOfRange).code).toBe("VALIDATION_FAILED");
  });
});

describe("a database that does not answer", () => {
  // What Sequelize and pg throw while PostgreSQL restarts: refused connections, sessions it ends, a cut socket.
  const cases: Array<[string, unknown]> = [
    ["a refused connection", Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { name: "SequelizeConnectionRefusedError" })],
    [
      "no connection from the pool in time",
      Object.assign(new Error("Operation timeout"), { name: "SequelizeConnectionAcquireTimeoutError" }),
    ],
    ["a session the server ended (57P01)", Object.assign(new Error("terminating connection"), { parent: { code: "57P01" } })],
    ["a server still starting (57P03)", Object.assign(new Error("the database system is starting up"), { original: { code: "57P03" } })],
    ["a connection exception (08006)", Object.assign(new Error("connection failure"), { code: "08006" })],
    ["a socket cut mid-statement", Object.assign(new Error("wrapped"), { parent: new Error("Connection terminated unexpectedly") })],
    [
      "a socket the server reset",
      Object.assign(new Error("wrapped"), { parent: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }) }),
    ],
    [
      "a write to a socket the server closed",
      Object.assign(new Error("wrapped"), { original: Object.assign(new Error("write EPIPE"), { code: "EPIPE" }) }),
    ],
    [
      "a pooled client pg closed after its socket was cut",
      Object.assign(new Error("wrapped"), { parent: new Error("Client was closed and is not queryable") }),
    ],
  ];
  test.each(cases)("%s is 503 service_unavailable on both edges, not a 500", (_what, thrown) => {
    expect(restErrorOf(thrown)).toEqual({
      status: 503,
      body: { error: "service_unavailable", message: expect.stringMatching(/try again/) },
    });
    expect(graphqlExtensionsOf(thrown).code).toBe("SERVICE_UNAVAILABLE");
  });

  test("other database errors stay internal", () => {
    expect(restErrorOf(Object.assign(new Error("syntax error"), { parent: { code: "42601" } }))).toEqual(INTERNAL_REST_ERROR);
  });
});

describe("the final express handler", () => {
  let server: http.Server;
  let baseUrl: string;

  beforeAll(async () => {
    const app = express();
    app.get("/api/v1/throws/:code", (req) => {
      throw EVERY_CODE[req.params.code as ErrorCode].error;
    });
    app.get("/api/v1/fault", () => {
      throw new Error("boom");
    });
    app.post("/api/v1/echo", express.json({ limit: "10b" }), (_req, res) => res.json({}));
    app.use(noRouteHandler);
    app.use(finalErrorHandler(createLogger("silent"), "10b"));
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test.each(Object.values(ErrorCode))("a %s that reaches it keeps the status of its code, not 400", async (code) => {
    const response = await client(baseUrl).get(`/api/v1/throws/${code}`);
    expect(response.status).toBe(EVERY_CODE[code].status);
    expect(response.body).toEqual(restErrorOf(EVERY_CODE[code].error).body);
  });

  test("a fault of ours is a 500 that says nothing of it", async () => {
    const response = await client(baseUrl).get("/api/v1/fault");
    expect(response).toMatchObject({ status: 500, body: { error: "internal_server_error", message: "An unexpected error occurred" } });
  });

  test("body-parser refusals are the 400 and 413 they mean, and unknown paths a 404", async () => {
    const api = client(baseUrl);
    expect(await api.post("/api/v1/echo", "{not json")).toMatchObject({ status: 400, body: { error: "bad_request" } });
    expect(await api.post("/api/v1/echo", { name: "far too long" })).toMatchObject({ status: 413, body: { error: "payload_too_large" } });
    expect(await api.get("/api/v1/nowhere")).toMatchObject({
      status: 404,
      body: { error: "not_found", message: "No route matches GET /api/v1/nowhere" },
    });
  });
});

test.each([
  ["state_mismatch", 400],
  ["idp_error", 401],
  ["nonce_mismatch", 401],
  ["invalid_id_token", 401],
  ["token_exchange_failed", 502],
  ["provider_disabled", 403],
  ["missing_email_claim", 403],
  ["email_not_verified", 403],
  ["domain_not_allowed", 403],
  ["jit_disabled_no_account", 403],
  ["user_suspended", 403],
  ["user_deleted", 403],
  ["identity_already_linked", 409],
] as const)("a failed SSO sign-in (%s) is answered %i at the edge, with its reason and never its detail", (reason, status) => {
  const { status: answered, body } = restErrorOf(new SsoLoginError(reason, "secret detail"));
  expect(answered).toBe(status);
  expect(body).toEqual({ error: "sso_login_failed", reason, message: expect.any(String) });
  expect(JSON.stringify(body)).not.toContain("secret detail");
});
