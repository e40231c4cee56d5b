import {
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  typeFromAST,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type GraphQLType,
  type SelectionNode,
  type SelectionSetNode,
} from "graphql";
import { stringify } from "yaml";
import { camelToSnake } from "./case";
import { prepareOperations, type PreparedOperation } from "./operations";
import { API_PREFIX, IMPORT_SETTING_KEYS, importUploadRoutes, type RestRoute, routes as allRoutes } from "./routes";

type JsonSchema = Record<string, unknown>;

const SCALARS: Record<string, JsonSchema> = {
  ID: { type: "string", format: "uuid" },
  String: { type: "string" },
  Boolean: { type: "boolean" },
  Int: { type: "integer" },
  Float: { type: "number" },
  SafeInt: { type: "integer" },
  Decimal: { type: "string", pattern: "^-?\\d+(\\.\\d+)?$", description: "Exact decimal; input may also be a JSON number." },
  Date: { type: "string", format: "date" },
  DateTimeISO: { type: "string", format: "date-time" },
  JSONObject: { type: "object" },
  WholeNumber: { anyOf: [{ type: "integer" }, { type: "string", pattern: "^-?\\d+$" }], description: "A whole number, or its text." },
  Flag: { anyOf: [{ type: "boolean" }, { type: "string", enum: ["true", "false", "1", "0"] }] },
};

function nullable(schema: JsonSchema): JsonSchema {
  return { anyOf: [schema, { type: "null" }] };
}

function scalarSchema(type: GraphQLType): JsonSchema {
  const named = getNamedType(type);
  if (isEnumType(named)) return { type: "string", enum: named.getValues().map((value) => value.name) };
  // A copy: callers add descriptions, which must not leak into the shared table.
  return { ...(SCALARS[named.name] ?? { type: "string" }) };
}

/** JSON schema of what an aliased selection returns: keys are the aliases REST clients see. */
function selectionSchema(
  type: GraphQLOutputType,
  selection: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
): JsonSchema {
  if (isNonNullType(type)) {
    const inner = selectionSchema(type.ofType, selection, fragments);
    return (inner.anyOf as JsonSchema[] | undefined)?.[0] ?? inner;
  }
  let schema: JsonSchema;
  if (isListType(type)) schema = { type: "array", items: selectionSchema(type.ofType, selection, fragments) };
  else if (isObjectType(type) && selection) schema = objectSchema(type, selection, fragments);
  else schema = scalarSchema(type);
  return nullable(schema);
}

/** A route's body that is whichever of these fields of the result is set: one of their schemas. */
function choiceSchema(
  operation: string,
  type: GraphQLOutputType,
  selection: SelectionSetNode,
  keys: string[],
  fragments: Map<string, FragmentDefinitionNode>,
): JsonSchema {
  const fields = (getNamedType(type) as GraphQLObjectType).getFields();
  return {
    oneOf: keys.map((key) => {
      const node = selection.selections.find((s) => s.kind === Kind.FIELD && (s.alias?.value ?? s.name.value) === key);
      if (!node || node.kind !== Kind.FIELD) throw new Error(`${operation}: no field ${key}`);
      const schema = selectionSchema(fields[node.name.value].type, node.selectionSet, fragments);
      return (schema.anyOf as JsonSchema[] | undefined)?.[0] ?? schema;
    }),
  };
}

function objectSchema(type: GraphQLObjectType, selection: SelectionSetNode, fragments: Map<string, FragmentDefinitionNode>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const collect = (set: SelectionSetNode) => {
    for (const node of set.selections) {
      if (node.kind === Kind.FRAGMENT_SPREAD) collect(fragments.get(node.name.value)!.selectionSet);
      else if (node.kind === Kind.INLINE_FRAGMENT) collect(node.selectionSet);
      else {
        const field = type.getFields()[node.name.value];
        const schema = selectionSchema(field.type, node.selectionSet, fragments);
        if (field.description) schema.description = field.description;
        properties[node.alias?.value ?? node.name.value] = schema;
      }
    }
  };
  collect(selection);
  return { type: "object", properties, required: Object.keys(properties) };
}

/** JSON schema of an input type as REST clients send it: snake_case keys. */
function inputSchema(type: GraphQLInputType): JsonSchema {
  if (isNonNullType(type)) return inputSchema(type.ofType);
  if (isListType(type)) return { type: "array", items: inputSchema(type.ofType) };
  if (isInputObjectType(type)) {
    const properties: Record<string, JsonSchema> = {};
    for (const [name, field] of Object.entries(type.getFields())) {
      properties[camelToSnake(name)] = { ...inputSchema(field.type), ...(field.description ? { description: field.description } : {}) };
    }
    return { type: "object", properties };
  }
  return scalarSchema(type);
}

const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
});

function operationFor(
  schema: GraphQLSchema,
  route: RestRoute,
  fragments: Map<string, FragmentDefinitionNode>,
  definition: PreparedOperation,
) {
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
  const parameters: JsonSchema[] = pathParams.map((name) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string", format: "uuid" },
  }));
  let requestBody: JsonSchema | undefined;
  for (const variable of definition.definition.variableDefinitions ?? []) {
    const name = variable.variable.name.value;
    const type = typeFromAST(schema, variable.type) as GraphQLInputType;
    if (pathParams.includes(name)) continue;
    if (name === "input" && route.bodyKey) {
      requestBody = {
        required: true,
        content: {
          "application/json": { schema: { type: "object", required: [route.bodyKey], properties: { [route.bodyKey]: inputSchema(type) } } },
        },
      };
      continue;
    }
    if (name === "input" && route.bodyAtRoot) {
      requestBody = { required: true, content: { "application/json": { schema: inputSchema(type) } } };
      continue;
    }
    const named = getNamedType(type);
    const fields = isInputObjectType(named)
      ? Object.entries(named.getFields()).map(([field, def]) => [field, def.type, def.description] as const)
      : [[name, type, undefined] as const];
    for (const [field, fieldType, description] of fields) {
      const list = isListType(isNonNullType(fieldType) ? fieldType.ofType : fieldType);
      parameters.push({
        name: route.queryKeys === "camelCase" ? field : `${camelToSnake(field)}${list ? "[]" : ""}`,
        in: "query",
        required: false,
        schema: inputSchema(fieldType),
        ...(description ? { description } : {}),
        ...(field === "perPage"
          ? { description: `Default ${route.perPageDefault ?? 25}, at most 100 (as upstream, any other number gives the default).` }
          : {}),
        ...(field === "page" ? { description: "Default 1; values below 1 become 1." } : {}),
      });
    }
  }
  for (const key of route.ignoredQueryKeys ?? []) {
    parameters.push({
      name: key,
      in: "query",
      required: false,
      schema: { type: "string" },
      description: "Accepted for upstream's clients; ignored.",
    });
  }
  const operationType = schema.getRootType(definition.definition.operation)!;
  let body: JsonSchema = { type: "object", properties: { message: { type: "string" } }, required: ["message"] };
  if (route.resultPath) {
    let type: GraphQLOutputType = operationType;
    let selection: SelectionSetNode | undefined = definition.definition.selectionSet;
    for (const key of route.resultPath) {
      const node: SelectionNode | undefined = selection!.selections.find(
        (s) => s.kind === Kind.FIELD && (s.alias?.value ?? s.name.value) === key,
      );
      if (!node || node.kind !== Kind.FIELD) throw new Error(`${route.operation}: no field ${key}`);
      type = (getNamedType(type) as GraphQLObjectType).getFields()[node.name.value].type;
      selection = node.selectionSet;
    }
    body = route.resultChoice
      ? choiceSchema(route.operation, type, selection!, route.resultChoice, fragments)
      : selectionSchema(type, selection, fragments);
  }
  const responses: Record<string, unknown> = {
    [route.status]:
      route.resultPath || route.message
        ? { description: "Success", content: { "application/json": { schema: body } } }
        : { description: "Success; no body" },
  };
  if (route.alternateStatus)
    responses[route.alternateStatus.status] = {
      description: route.alternateStatus.description,
      content: { "application/json": { schema: body } },
    };
  responses[400] = errorResponse("Malformed JSON, wrong content type, a missing required parameter or an unknown query key");
  responses[401] = errorResponse("Missing or invalid credentials");
  if (route.method !== "GET") responses[403] = errorResponse("The key lacks the read_write scope");
  if (pathParams.length) responses[404] = errorResponse("Unknown id, or an id of another family");
  if (requestBody || parameters.some((p) => p.in === "query"))
    responses[422] = errorResponse("Validation failed; per-field messages in `errors`");
  responses[429] = errorResponse("Rate limit exceeded; see Retry-After");
  return {
    operationId: route.operation,
    summary: route.summary,
    tags: [route.tag],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
  };
}

const TOKEN_RESPONSE = {
  type: "object",
  required: ["access_token", "refresh_token", "token_type", "expires_in", "created_at"],
  properties: {
    access_token: { type: "string" },
    refresh_token: { type: "string", description: "Works once; a new one comes with each refresh." },
    token_type: { type: "string", enum: ["Bearer"] },
    expires_in: { type: "integer" },
    created_at: { type: "integer", description: "Unix seconds." },
  },
};
const DEVICE = { type: "object", description: "Upstream's device description; accepted and not stored." };
const jsonBody = (schema: JsonSchema) => ({ required: true, content: { "application/json": { schema } } });
const jsonResponse = (description: string, schema: JsonSchema) => ({ description, content: { "application/json": { schema } } });

/**
 * Upstream's sign-in routes, served by the auth router (they run no GraphQL operation: signing in
 * happens before there is an actor). Audited like POST /auth/login.
 */
const SIGN_IN_PATHS = {
  "/auth/login": {
    post: {
      operationId: "apiLogin",
      summary: "Sign in with e-mail and password; answers a token pair and the user (auth.login.success / auth.login.failed)",
      tags: ["Auth"],
      security: [],
      requestBody: jsonBody({
        type: "object",
        required: ["email", "password"],
        properties: { email: { type: "string" }, password: { type: "string" }, otp_code: { type: "string" }, device: DEVICE },
      }),
      responses: {
        200: jsonResponse("Signed in", {
          ...TOKEN_RESPONSE,
          required: [...TOKEN_RESPONSE.required, "user"],
          properties: {
            ...TOKEN_RESPONSE.properties,
            user: {
              type: "object",
              properties: { id: { type: "string", format: "uuid" }, email: { type: "string" }, ai_enabled: { type: "boolean" } },
            },
          },
        }),
        400: errorResponse("A missing email or password"),
        401: errorResponse("Wrong e-mail or password, or a locked or deactivated account"),
        429: errorResponse("Rate limit exceeded; see Retry-After"),
      },
    },
  },
  "/auth/refresh": {
    post: {
      operationId: "apiRefresh",
      summary: "Exchange a refresh token for a new token pair (auth.token.refreshed)",
      tags: ["Auth"],
      security: [],
      requestBody: jsonBody({
        type: "object",
        required: ["refresh_token"],
        properties: { refresh_token: { type: "string" }, device: DEVICE },
      }),
      responses: {
        200: jsonResponse("A new token pair", TOKEN_RESPONSE),
        400: errorResponse("A missing, unknown, expired or already used refresh token (invalid_grant)"),
        429: errorResponse("Rate limit exceeded; see Retry-After"),
      },
    },
  },
};

const nullableString = { type: ["string", "null"] };
const countOf = (description?: string) => ({ type: "integer", ...(description ? { description } : {}) });

/** Preflight's answer (import.router.ts preflightBody): upstream's payload with our counts and what was detected. */
const PREFLIGHT_RESPONSE = {
  type: "object",
  required: ["data"],
  properties: {
    data: {
      type: "object",
      properties: {
        type: { type: "string", enum: ["TransactionImport", "AccountImport", "TradeImport"] },
        valid: { type: "boolean" },
        content: {
          type: "object",
          properties: { filename: { type: "string" }, content_type: { type: "string" }, byte_size: countOf() },
        },
        stats: {
          type: "object",
          properties: {
            rows_count: countOf(),
            valid_rows_count: countOf(),
            invalid_rows_count: countOf(),
            importable_count: countOf("Rows a publish of this file would write now."),
            duplicate_count: countOf("Valid rows already imported."),
          },
        },
        headers: { type: "array", items: { type: "string" } },
        required_headers: { type: "array", items: { type: "string" } },
        missing_required_headers: { type: "array", items: { type: "string" } },
        errors: {
          type: "array",
          items: { type: "object", properties: { code: { type: "string" }, message: { type: "string" } } },
        },
        warnings: { type: "array", items: { type: "string" } },
        row_errors: {
          type: "array",
          description: "The first 100 rows with problems, in file order.",
          items: { type: "object", properties: { row_number: countOf(), errors: { type: "array", items: { type: "string" } } } },
        },
        detected: {
          type: "object",
          properties: {
            col_sep: { type: "string" },
            date_format: nullableString,
            number_format: nullableString,
            columns: {
              type: "object",
              additionalProperties: { type: "string" },
              description: "The columns read (date, amount, merchant …), each with the header it was found under.",
            },
          },
        },
      },
    },
  },
};

/** The configuration fields of an upload, in a JSON body or as multipart fields before the file part. */
function uploadRequestBody(withPublish: boolean) {
  const settings = Object.fromEntries(IMPORT_SETTING_KEYS.map((key) => [key, { type: "string" }]));
  const publish = withPublish
    ? { publish: { type: "string", enum: ["true", "false"], description: "true: also write it, all or nothing." } }
    : {};
  return {
    required: true,
    content: {
      "multipart/form-data": {
        schema: {
          type: "object",
          required: ["file"],
          properties: {
            ...settings,
            ...publish,
            file: { type: "string", format: "binary", description: "The CSV file, after the configuration fields; read as it arrives." },
          },
        },
      },
      "application/json": {
        schema: {
          type: "object",
          required: ["raw_file_content"],
          properties: { ...settings, ...publish, raw_file_content: { type: "string", description: "The file's content." } },
        },
      },
    },
  };
}

/** POST /imports and /imports/preflight, served by the imports router beside the route table. */
function describeUploads(paths: Record<string, Record<string, unknown>>): void {
  const shown = paths["/imports/{id}"]?.get as { responses: Record<string, { content: unknown }> } | undefined;
  for (const route of importUploadRoutes) {
    const create = route.path === "/imports";
    const success = create
      ? { description: "The import as GET /imports/{id} shows it", content: shown?.responses[200].content }
      : jsonResponse("What importing the file would do", PREFLIGHT_RESPONSE);
    paths[route.path] ??= {};
    paths[route.path].post = {
      operationId: route.operationId,
      summary: route.summary,
      tags: ["Imports"],
      requestBody: uploadRequestBody(create),
      responses: {
        [route.status]: success,
        400: errorResponse("Neither multipart nor JSON, a multipart body cut short, or JSON that does not parse"),
        401: errorResponse("Missing or invalid credentials"),
        ...(create ? { 403: errorResponse("The key lacks the read_write scope") } : {}),
        413: errorResponse("The file is larger than IMPORT_MAX_BYTES"),
        422: errorResponse(
          "A setting (an account_id of no account of the family), the file (not UTF-8, no header, too many rows or columns) or, with publish, a row has a problem",
        ),
        429: errorResponse("Rate limit exceeded; see Retry-After"),
      },
    };
  }
}

/** The OpenAPI 3.1 document of /api/v1, generated from the route table and the operations. */
export function buildOpenApi(schema: GraphQLSchema, routes: RestRoute[] = allRoutes): string {
  const prepared = prepareOperations(
    schema,
    routes.map((route) => route.operation),
  );
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation = prepared.get(route.operation)!;
    const fragments = new Map(
      operation.document.definitions
        .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
        .map((fragment) => [fragment.name.value, fragment]),
    );
    paths[route.path] ??= {};
    const described = operationFor(schema, route, fragments, operation);
    paths[route.path][route.method.toLowerCase()] = described;
    // Upstream's Rails resources route PUT like PATCH, and its clients use either.
    if (route.method === "PATCH")
      paths[route.path].put = { ...described, operationId: `${route.operation}ViaPut`, summary: `${route.summary} (PUT is PATCH)` };
  }
  describeUploads(paths);
  Object.assign(paths, SIGN_IN_PATHS);
  const document = {
    openapi: "3.1.0",
    info: {
      title: "finance-gateway REST API",
      version: "v1",
      description: "REST compatibility layer over the GraphQL API. Every route runs one GraphQL operation; see schema/schema.graphql.",
    },
    servers: [{ url: API_PREFIX }],
    security: [{ ApiKeyAuth: [] }, { BearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        ApiKeyAuth: { type: "apiKey", in: "header", name: "X-Api-Key" },
        BearerAuth: { type: "http", scheme: "bearer", description: "An access token from POST /auth/login or /oauth/token." },
      },
      schemas: {
        Error: {
          type: "object",
          required: ["error", "message"],
          properties: {
            error: { type: "string", description: "snake_case code, e.g. validation_failed" },
            message: { type: "string" },
            errors: { type: "array", items: { type: "string" } },
            details: { type: "object" },
          },
        },
      },
    },
  };
  return `# Generated by \`npx finance-gateway emit-contracts\` from rest-adapter/routes.ts. Do not edit.\n${stringify(document, { lineWidth: 0, aliasDuplicateObjects: false })}`;
}
