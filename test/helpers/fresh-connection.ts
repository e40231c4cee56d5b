import http from "node:http";

export type FreshResponse = { status: number; headers: http.IncomingHttpHeaders; body: any; text: string };

/**
 * One request on a TCP connection of its own (`Connection: close`), so a round-robin proxy in front
 * spreads consecutive requests over its backends, as a load balancer does for separate clients.
 * Rejects when the connection fails or is cut (a backend killed mid-request); `timeoutMs` bounds it.
 */
export function freshConnection(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<FreshResponse> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: options.method ?? "GET",
        agent: false,
        headers: { ...(payload ? { "content-type": "application/json" } : {}), ...options.headers, connection: "close" },
        timeout: options.timeoutMs ?? 30_000,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => {
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            // Not JSON: the text is the body.
          }
          resolve({ status: response.statusCode!, headers: response.headers, body, text });
        });
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error(`no answer from ${url} within ${options.timeoutMs ?? 30_000} ms`)));
    request.on("error", reject);
    request.end(payload);
  });
}
