import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { GraphiQL } from "graphiql";
import { createGraphiQLFetcher, type Fetcher } from "@graphiql/toolkit";
import { getOperationAST, parse } from "graphql";
import { createClient, type Client } from "graphql-ws";
import "graphiql/style.css";
import "./explorer.css";

/**
 * GraphiQL, bundled, for /graphql in a browser. Credentials: the console's session cookie (sent by
 * the browser with every request and with the WebSocket upgrade), or an `X-Api-Key` /
 * `Authorization` header typed in the Headers tab, which subscriptions send as connection params.
 */
const httpFetcher = createGraphiQLFetcher({ url: "/graphql" });
const sockets = new Map<string, Client>();

function socketFor(headers: Record<string, unknown>): Client {
  const key = JSON.stringify(headers);
  let socket = sockets.get(key);
  if (!socket) {
    const url = new URL("/graphql", window.location.href);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    socket = createClient({ url: url.href, connectionParams: headers, lazy: true });
    sockets.set(key, socket);
  }
  return socket;
}

/**
 * The operation to run. GraphiQL updates its operation name a moment after an edit: a document pasted
 * and run at once still carries the previous document's name, which the server rejects as unknown.
 * A name the document does not define is dropped when the document has a single operation.
 */
function operationOf(query: string, operationName?: string | null): { kind?: string; operationName?: string } {
  try {
    const document = parse(query);
    const named = getOperationAST(document, operationName ?? undefined);
    if (named) return { kind: named.operation, operationName: operationName ?? undefined };
    const only = getOperationAST(document);
    return only ? { kind: only.operation, operationName: only.name?.value } : { operationName: operationName ?? undefined };
  } catch {
    return { operationName: operationName ?? undefined };
  }
}

const fetcher: Fetcher = (params, options) => {
  const { kind, operationName } = operationOf(params.query, params.operationName);
  if (kind !== "subscription") return httpFetcher({ ...params, operationName }, options);
  const socket = socketFor((options?.headers as Record<string, unknown>) ?? {});
  // GraphiQL only reads the results' JSON shape; graphql-ws yields them as they arrive on the wire.
  return socket.iterate({
    query: params.query,
    variables: params.variables ?? undefined,
    operationName,
  }) as unknown as ReturnType<Fetcher>;
};

// Short lines: the editor does not wrap, and a comment cut at the pane's edge reads as nonsense.
const DEFAULT_QUERY = `# Signed in to the admin console?
# Your session works here. Otherwise put
#   {"X-Api-Key": "fgk_…"}
# or
#   {"Authorization": "Bearer fga_…"}
# in the Headers tab below.
#
# Subscriptions run over the WebSocket:
#   subscription {
#     auditEventRecorded {
#       timestamp eventType severity
#     }
#   }
query RecentFailedLogins {
  me {
    email
    role
  }
  auditEvents(filter: { eventTypes: ["auth.login.failed"] }, first: 5) {
    nodes {
      timestamp
      ipAddress
      user {
        email
      }
      error
    }
  }
}
`;

/** A document given in the address (/graphql#query=…) opens in the editor: links can carry a ready query. */
const linkedQuery = new URLSearchParams(window.location.hash.slice(1)).get("query") ?? undefined;

createRoot(document.getElementById("explorer")!).render(
  <StrictMode>
    <header className="explorer-bar">
      <a href="/admin/">← Admin console</a>
      <span>GraphQL explorer</span>
    </header>
    <GraphiQL fetcher={fetcher} defaultQuery={DEFAULT_QUERY} query={linkedQuery} />
  </StrictMode>,
);
