import { Client, cacheExchange, fetchExchange, mapExchange, subscriptionExchange } from "urql";
import { createClient as createWsClient, type Client as WsClient } from "graphql-ws";

/** Where the socket stands: shown in the live view, and the signal to fall back to polling. */
export type SocketState = "idle" | "connecting" | "connected" | "closed";

type Listener = (state: SocketState, detail: { everConnected: boolean }) => void;

/** Fired when the server says the session is gone (expired, signed out elsewhere): the app returns to sign-in. */
export const SIGNED_OUT_EVENT = "console:signed-out";

function socketUrl(): string {
  const url = new URL("/graphql", window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

/**
 * One GraphQL client for the console: queries and mutations over HTTP with the session cookie,
 * subscriptions over graphql-ws (the browser sends the same cookie with the upgrade).
 */
export function createConsoleClient(): { client: Client; socket: WsClient; onSocketState(listener: Listener): () => void } {
  const listeners = new Set<Listener>();
  let everConnected = false;
  let current: SocketState = "idle";
  const emit = (state: SocketState) => {
    current = state;
    listeners.forEach((listener) => listener(state, { everConnected }));
  };
  const socket = createWsClient({
    url: socketUrl(),
    lazy: true,
    // Keep trying: a proxy that blocks WebSockets gets polling meanwhile (see live.ts).
    retryAttempts: Number.POSITIVE_INFINITY,
    shouldRetry: () => true,
    retryWait: async (retries) => new Promise((resolve) => setTimeout(resolve, Math.min(1000 * 2 ** retries, 15_000))),
    on: {
      connecting: () => emit("connecting"),
      connected: () => {
        everConnected = true;
        emit("connected");
      },
      closed: () => emit("closed"),
      error: () => emit("closed"),
    },
  });
  const client = new Client({
    url: "/graphql",
    fetchOptions: { credentials: "same-origin", headers: { accept: "application/graphql-response+json, application/json" } },
    requestPolicy: "network-only",
    // POST: Apollo refuses GET queries without a CSRF preflight header, and the filters can be long.
    preferGetMethod: false,
    exchanges: [
      mapExchange({
        onError(error) {
          const status = (error.response as Response | undefined)?.status;
          const unauthenticated = error.graphQLErrors.some((e) => e.extensions?.code === "UNAUTHENTICATED");
          if (status === 401 || unauthenticated) window.dispatchEvent(new Event(SIGNED_OUT_EVENT));
        },
      }),
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription: (request) => ({
          subscribe: (sink) => ({ unsubscribe: socket.subscribe({ ...request, query: request.query ?? "" }, sink) }),
        }),
      }),
    ],
  });
  return {
    client,
    socket,
    /** A listener hears the state at once when the socket is already up: another view (the alert toasts) may have opened it. */
    onSocketState(listener) {
      listeners.add(listener);
      // After the caller's own synchronous setup (it may set "connecting" right after subscribing).
      queueMicrotask(() => {
        if (listeners.has(listener) && current === "connected") listener(current, { everConnected });
      });
      return () => listeners.delete(listener);
    },
  };
}
