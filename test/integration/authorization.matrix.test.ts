/**
 * Issue 27: every GraphQL root field and every REST route, called as every kind of caller, answers as
 * ACCESS_RULES (src/transports/graphql/access-rules.ts) declares. Arguments are the smallest well-typed
 * values introspection allows, so each call reaches the field's authorization (and, when allowed, its
 * resolver, which then answers not-found or invalid input). A root field without a rule fails here; a
 * field whose implementation is more permissive than its rule (the planted fixture below) is caught.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import {
  getIntrospectionQuery,
  parse,
  subscribe,
  type IntrospectionField,
  type IntrospectionInputTypeRef,
  type IntrospectionInputValue,
  type IntrospectionQuery,
  type IntrospectionType,
  type IntrospectionTypeRef,
} from "graphql";
import { Authorized, Field, ObjectType, Query, Resolver } from "type-graphql";
import { RequestContext } from "../../src/transports/graphql/context";
import { formatGraphQLError } from "../../src/transports/graphql/errors";
import { resolveActor } from "../../src/transports/http/authenticate";
import { ACCESS_RULES, type AccessRule, type RootType } from "../../src/transports/graphql/access-rules";
import { OPERATIONS_DIR } from "../../rest-adapter/operations";
import { routes, API_PREFIX } from "../../rest-adapter/routes";
import { createUser, type TestUser } from "../helpers/fixtures";
import { client, apiKeyClient } from "../helpers/http";
import { startTestApp, type TestApp } from "../helpers/test-app";

jest.setTimeout(120_000);

type Persona = "none" | "member" | "auditor" | "adminReadKey" | "adminWriteKey" | "otherFamilyAdmin";
type Outcome = "unauthenticated" | "forbidden" | "insufficient_scope" | "allowed";
const PERSONAS: Persona[] = ["none", "member", "auditor", "adminReadKey", "adminWriteKey", "otherFamilyAdmin"];

/** What each kind of caller gets under each rule. Another family's administrator is an administrator: its data stays apart (families.isolation). */
function expected(rule: AccessRule, persona: Persona): Outcome {
  if (persona === "none") return "unauthenticated";
  const writes = rule === "write" || rule === "auditWrite" || rule === "adminWrite";
  if (writes && persona === "adminReadKey") return "insufficient_scope";
  const audit = rule === "audit" || rule === "auditWrite";
  const admin = rule === "admin" || rule === "adminWrite";
  if (audit && persona === "member") return "forbidden";
  if (admin && (persona === "member" || persona === "auditor")) return "forbidden";
  return "allowed";
}

function classify(error: { extensions?: { code?: string; restError?: string } } | undefined): Outcome {
  if (!error) return "allowed";
  if (error.extensions?.code === "UNAUTHENTICATED") return "unauthenticated";
  if (error.extensions?.code === "FORBIDDEN")
    return error.extensions.restError === "insufficient_scope" ? "insufficient_scope" : "forbidden";
  return "allowed";
}

/** The planted hole: declared for administrators with a write key, implemented without `@Authorized()`. */
@ObjectType()
class PlantedSecret {
  @Field()
  value!: string;
}
@Resolver()
class PlantedHoleResolver {
  @Query(() => PlantedSecret)
  plantedHole(): PlantedSecret {
    return { value: "leaked" };
  }
}
/** The same field done right, to show the matrix passes a field that keeps its rule. */
@Resolver()
class PlantedKeptResolver {
  @Authorized()
  @Query(() => PlantedSecret)
  plantedKept(): PlantedSecret {
    return { value: "kept" };
  }
}
const FIXTURE_RULES: Record<string, AccessRule> = { plantedHole: "adminWrite", plantedKept: "adminWrite" };

let app: TestApp;
let keys: Record<Exclude<Persona, "none">, string>;
let introspection: IntrospectionQuery["__schema"];

beforeAll(async () => {
  Object.assign(ACCESS_RULES.Query, FIXTURE_RULES);
  app = await startTestApp({ extraResolvers: [PlantedHoleResolver, PlantedKeptResolver] });
  const services = app.runtime.services;
  // The assistant turned on for all, so chats answer by their rule rather than "AI is disabled".
  const admin: TestUser = await createUser(services, { role: "admin", aiEnabled: true });
  const member = await createUser(services, { familyOf: admin, role: "member", aiEnabled: true });
  const auditor = await createUser(services, { familyOf: admin, role: "auditor", aiEnabled: true });
  const other = await createUser(services, { role: "admin", aiEnabled: true });
  keys = {
    member: member.key,
    auditor: auditor.key,
    adminReadKey: admin.readKey,
    adminWriteKey: admin.key,
    otherFamilyAdmin: other.key,
  };
  introspection = ((await client(app.url).graphql(getIntrospectionQuery())).body.data as IntrospectionQuery).__schema;
});

afterAll(async () => {
  await app?.stop();
  for (const field of Object.keys(FIXTURE_RULES)) delete ACCESS_RULES.Query[field];
});

const typeNamed = (name: string): IntrospectionType => introspection.types.find((type) => type.name === name)!;

const SCALARS: Record<string, unknown> = {
  ID: randomUUID(),
  String: "x",
  Int: 1,
  Float: 1,
  Boolean: false,
  Date: "2026-01-01",
  DateTimeISO: "2026-01-01T00:00:00.000Z",
  Decimal: "1",
  JSONObject: {},
  SafeInt: 1,
};

/** The smallest value of an input type: required fields only, one element for a required list. */
function sample(ref: IntrospectionInputTypeRef): unknown {
  if (ref.kind === "NON_NULL") return sample(ref.ofType);
  if (ref.kind === "LIST") return [sample(ref.ofType)];
  const type = typeNamed(ref.name);
  if (type.kind === "SCALAR") {
    if (!(type.name in SCALARS)) throw new Error(`no sample value for the scalar ${type.name}: add one`);
    return SCALARS[type.name];
  }
  if (type.kind === "ENUM") return type.enumValues[0].name;
  if (type.kind === "INPUT_OBJECT") {
    return Object.fromEntries(
      type.inputFields
        .filter((field) => field.type.kind === "NON_NULL" && field.defaultValue === null)
        .map((field) => [field.name, sample(field.type)]),
    );
  }
  throw new Error(`unexpected input type ${type.name}`);
}

const typeText = (ref: IntrospectionTypeRef): string =>
  ref.kind === "NON_NULL" ? `${typeText(ref.ofType)}!` : ref.kind === "LIST" ? `[${typeText(ref.ofType)}]` : ref.name;

function namedOf(ref: IntrospectionTypeRef): string {
  return ref.kind === "NON_NULL" || ref.kind === "LIST" ? namedOf(ref.ofType) : ref.name;
}

/** A document calling one root field with its required arguments, selecting only `__typename` of an object. */
function document(kind: RootType, field: IntrospectionField): { query: string; variables: Record<string, unknown> } {
  const required = field.args.filter((arg: IntrospectionInputValue) => arg.type.kind === "NON_NULL" && arg.defaultValue === null);
  const declarations = required.map((arg) => `$${arg.name}: ${typeText(arg.type)}`).join(", ");
  const args = required.map((arg) => `${arg.name}: $${arg.name}`).join(", ");
  const returned = typeNamed(namedOf(field.type));
  const selection = returned.kind === "SCALAR" || returned.kind === "ENUM" ? "" : " { __typename }";
  const operation = kind.toLowerCase();
  return {
    query: `${operation}${declarations ? ` (${declarations})` : ""} { ${field.name}${args ? `(${args})` : ""}${selection} }`,
    variables: Object.fromEntries(required.map((arg) => [arg.name, sample(arg.type)])),
  };
}

function rootFields(kind: RootType): readonly IntrospectionField[] {
  const name = { Query: introspection.queryType, Mutation: introspection.mutationType, Subscription: introspection.subscriptionType }[kind]
    ?.name;
  const type = name ? typeNamed(name) : undefined;
  return type && type.kind === "OBJECT" ? type.fields : [];
}

async function callOverHttp(persona: Persona, query: string, variables: Record<string, unknown>, field: string): Promise<Outcome> {
  const http = persona === "none" ? client(app.url) : apiKeyClient(app.url, keys[persona]);
  const response = await http.graphql(query, variables);
  const errors = (response.body.errors ?? []) as Array<{ path?: string[]; extensions?: { code?: string; restError?: string } }>;
  const fieldError = errors.find((error) => error.path?.[0] === field);
  if (!fieldError && errors.length && !response.body.data) throw new Error(`${field} as ${persona}: ${JSON.stringify(errors)}`);
  return classify(fieldError);
}

/**
 * A subscription as the socket runs it: the connection's credential resolved by the same checks, then
 * graphql-js subscribes with the caller's context. subscribe() answers at once (errors when refused, an
 * event stream when allowed), so no wait decides the outcome; the socket's own connection rules are
 * tested in hostile.websocket.
 */
async function callSubscription(persona: Persona, query: string, variables: Record<string, unknown>): Promise<Outcome> {
  const { services, schema, logger } = app.runtime;
  const actor = persona === "none" ? null : await resolveActor(services, { apiKey: keys[persona] });
  const result = await subscribe({
    schema: schema!,
    document: parse(query),
    variableValues: variables,
    contextValue: new RequestContext(services, actor, randomUUID(), logger),
  });
  if (Symbol.asyncIterator in result) {
    await result.return?.();
    return "allowed";
  }
  const [error] = result.errors ?? [];
  return classify(error && formatGraphQLError(logger)(error.toJSON(), error));
}

test("every root field of the schema has a declared rule, and every rule names a field", () => {
  for (const kind of ["Query", "Mutation", "Subscription"] as RootType[]) {
    const names = rootFields(kind).map((field) => field.name);
    expect(names.filter((name) => !(name in ACCESS_RULES[kind]))).toEqual([]);
    expect(Object.keys(ACCESS_RULES[kind]).filter((name) => !names.includes(name))).toEqual([]);
  }
});

test("every GraphQL query, mutation and subscription answers each caller as its rule says (and the planted hole is caught)", async () => {
  const mismatches: string[] = [];
  let calls = 0;
  const cases = (["Query", "Mutation", "Subscription"] as RootType[]).flatMap((kind) => rootFields(kind).map((field) => ({ kind, field })));
  // Ten fields at a time, each as every caller at once: one app, about 800 requests, a few seconds.
  for (let start = 0; start < cases.length; start += 10) {
    await Promise.all(
      cases.slice(start, start + 10).map(async ({ kind, field }) => {
        const rule = ACCESS_RULES[kind][field.name];
        const { query, variables } = document(kind, field);
        const outcomes = await Promise.all(
          PERSONAS.map((persona) =>
            kind === "Subscription" ? callSubscription(persona, query, variables) : callOverHttp(persona, query, variables, field.name),
          ),
        );
        calls += outcomes.length;
        PERSONAS.forEach((persona, index) => {
          if (outcomes[index] !== expected(rule, persona))
            mismatches.push(`${kind}.${field.name} (${rule}) as ${persona}: ${outcomes[index]}, expected ${expected(rule, persona)}`);
        });
      }),
    );
  }
  mismatches.sort();
  expect(calls).toBeGreaterThan(700);
  // Only the planted fixture is more permissive than its rule: every caller reads it.
  expect(mismatches).toEqual([
    "Query.plantedHole (adminWrite) as adminReadKey: allowed, expected insufficient_scope",
    "Query.plantedHole (adminWrite) as auditor: allowed, expected forbidden",
    "Query.plantedHole (adminWrite) as member: allowed, expected forbidden",
    "Query.plantedHole (adminWrite) as none: allowed, expected unauthenticated",
  ]);
});

/** The rule of a REST route: the strictest of the root fields its operation calls. */
function restRule(operationText: string, kind: "Query" | "Mutation"): AccessRule {
  const order: AccessRule[] = ["read", "write", "audit", "auditWrite", "admin", "adminWrite"];
  const fields = Object.keys(ACCESS_RULES[kind]).filter((name) => new RegExp(`[{\\s]${name}\\s*[({]`).test(operationText));
  if (!fields.length) throw new Error(`no declared root field found in ${operationText}`);
  const rule = fields.map((name) => ACCESS_RULES[kind][name]).sort((a, b) => order.indexOf(b) - order.indexOf(a))[0];
  // REST refuses a read-only key on every mutation before its body is read.
  if (kind === "Mutation") return rule === "read" ? "write" : rule === "audit" ? "auditWrite" : rule === "admin" ? "adminWrite" : rule;
  return rule;
}

test("every REST route answers each caller as the rules of its operation say; a read key's broken body is refused for its scope first", async () => {
  const statusOf: Record<Outcome, (status: number) => boolean> = {
    unauthenticated: (status) => status === 401,
    forbidden: (status) => status === 403,
    insufficient_scope: (status) => status === 403,
    allowed: (status) => status !== 401 && status !== 403 && status < 500,
  };
  const mismatches: string[] = [];
  // DELETE /users/me ends the caller's account when allowed: it goes last, one caller at a time, so that no
  // other call (nor the same admin's read key, refused for its scope) meets an account already deleted.
  const endsCaller = (route: (typeof routes)[number]) => route.operation === "deleteMyAccount";
  for (const route of [...routes.filter((route) => !endsCaller(route)), ...routes.filter(endsCaller)]) {
    const text = fs.readFileSync(path.join(OPERATIONS_DIR, `${route.operation}.graphql`), "utf8");
    const kind = /^\s*mutation/.test(text) ? "Mutation" : "Query";
    const rule = restRule(text, kind);
    const url = API_PREFIX + route.path.replace(/\{[^}]+\}/g, randomUUID());
    const call = async (persona: Persona) => {
      const http = persona === "none" ? client(app.url) : apiKeyClient(app.url, keys[persona]);
      if (route.method === "GET") return (await http.get(url)).status;
      if (route.method === "DELETE") return (await http.delete(url)).status;
      const body = route.bodyKey ? { [route.bodyKey]: {} } : {};
      return (await (route.method === "POST" ? http.post(url, body) : http.patch(url, body))).status;
    };
    const statuses: number[] = [];
    if (endsCaller(route)) for (const persona of PERSONAS) statuses.push(await call(persona));
    else statuses.push(...(await Promise.all(PERSONAS.map(call))));
    PERSONAS.forEach((persona, index) => {
      const want = expected(rule, persona);
      if (!statusOf[want](statuses[index]))
        mismatches.push(`${route.method} ${route.path} (${rule}) as ${persona}: ${statuses[index]}, expected ${want}`);
    });
    if (route.method !== "GET" && route.method !== "DELETE") {
      // Scope before body, as upstream: a read-only key sending JSON that does not parse gets 403, not 400.
      const broken = await fetch(`${app.url}${url}`, {
        method: route.method,
        headers: { "X-Api-Key": keys.adminReadKey, "Content-Type": "application/json" },
        body: "{not json",
      });
      if (broken.status !== 403)
        mismatches.push(`${route.method} ${route.path} with a read key and a broken body: ${broken.status}, expected 403`);
    }
  }
  expect(mismatches).toEqual([]);
});
