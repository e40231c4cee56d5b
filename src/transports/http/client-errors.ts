import type http from "node:http";
import type { Duplex } from "node:stream";

/**
 * Requests Node refuses before express sees them (a malformed request line, headers past the 16 KB
 * limit, a request slower than the server's timeouts) get Node's bare status line by default. They
 * are answered here with the documented error body and their own status, and the connection closed.
 */
export function answerClientErrors(server: http.Server): void {
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (error.code === "ECONNRESET" && !socket.readable)) return void socket.destroy();
    const [status, reason, body] = describe(error.code);
    const json = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`,
    );
  });
}

function describe(code: string | undefined): [number, string, { error: string; message: string }] {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return [431, "Request Header Fields Too Large", { error: "headers_too_large", message: "The request line and headers exceed 16 KB" }];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, "Request Timeout", { error: "request_timeout", message: "The request was not received in time" }];
    default:
      return [400, "Bad Request", { error: "bad_request", message: "The request is not valid HTTP" }];
  }
}
