export type HttpResponse<T = any> = { status: number; headers: Headers; body: T; text: string };

/** A tiny fetch wrapper for tests: JSON in, parsed JSON (or text) out, never throws on status. */
export function client(baseUrl: string, headers: Record<string, string> = {}) {
  const send = async (method: string, path: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<HttpResponse> => {
    const init: RequestInit = { method, headers: { ...headers, ...extraHeaders } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] ??= "application/json";
    }
    const response = await fetch(`${baseUrl}${path}`, init);
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: parseJson(text), text };
  };
  return {
    get: (path: string, extra?: Record<string, string>) => send("GET", path, undefined, extra),
    post: (path: string, body?: unknown, extra?: Record<string, string>) => send("POST", path, body, extra),
    patch: (path: string, body?: unknown, extra?: Record<string, string>) => send("PATCH", path, body, extra),
    put: (path: string, body?: unknown, extra?: Record<string, string>) => send("PUT", path, body, extra),
    delete: (path: string, extra?: Record<string, string>) => send("DELETE", path, undefined, extra),
    /** POST /graphql with a query and variables. */
    graphql: (query: string, variables?: Record<string, unknown>, extra?: Record<string, string>) =>
      send("POST", "/graphql", { query, variables }, extra),
  };
}

export function apiKeyClient(baseUrl: string, key: string) {
  return client(baseUrl, { "x-api-key": key });
}

function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
