import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A fake OpenAI-compatible chat-completions server on loopback: real HTTP, streamed (SSE) and plain
 * responses, tool calls, errors and stalls. Tests script its next answers; with nothing scripted it
 * answers "Fake answer." Every request body is kept for assertions.
 */
export type FakeStep =
  | { kind: "text"; content: string }
  | { kind: "tool_calls"; calls: Array<{ name: string; arguments: string }> }
  | { kind: "status"; status: number; message?: string }
  /** Waits before answering with `then` (or hangs for good when `then` is absent, until the client gives up). */
  | { kind: "delay"; ms: number; then?: FakeStep }
  /** Holds the answer until the test opens the gate (resolves `opened`), then answers with `then`. */
  | { kind: "gate"; opened: Promise<unknown>; then: FakeStep };

export type FakeOpenAI = {
  url: string;
  requests: Array<Record<string, any>>;
  script(...steps: FakeStep[]): void;
  reset(): void;
  close(): Promise<void>;
};

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const steps: FakeStep[] = [];
  const requests: Array<Record<string, any>> = [];
  const sockets = new Set<import("node:net").Socket>();
  let sequence = 0;

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "not found" } }));
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    requests.push(body);
    let step: FakeStep = steps.shift() ?? { kind: "text", content: "Fake answer." };
    while (step.kind === "gate" || step.kind === "delay") {
      if (step.kind === "gate") {
        await step.opened;
        step = step.then;
        continue;
      }
      const ms = step.ms;
      // A client that gives up (a timeout, a killed worker) ends the wait.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        res.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (res.destroyed || !step.then) {
        if (!res.destroyed) res.destroy();
        return;
      }
      step = step.then;
    }
    respond(res, body, step, `chatcmpl-${++sequence}`);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...next) => steps.push(...next),
    reset() {
      steps.length = 0;
      requests.length = 0;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function respond(
  res: http.ServerResponse,
  body: Record<string, any>,
  step: Exclude<FakeStep, { kind: "delay" | "gate" }>,
  id: string,
): void {
  if (step.kind === "status") {
    res
      .writeHead(step.status, { "content-type": "application/json" })
      .end(JSON.stringify({ error: { message: step.message ?? `fake error ${step.status}`, type: "fake", code: null } }));
    return;
  }
  const model = body.model;
  const created = Math.floor(Date.now() / 1000);
  const toolCalls =
    step.kind === "tool_calls"
      ? step.calls.map((call, index) => ({ index, id: `call_${id}_${index}`, type: "function", function: call }))
      : undefined;
  if (!body.stream) {
    const message =
      step.kind === "text"
        ? { role: "assistant", content: step.content }
        : { role: "assistant", content: null, tool_calls: toolCalls!.map(({ index: _index, ...call }) => call) };
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message, finish_reason: step.kind === "text" ? "stop" : "tool_calls" }],
      }),
    );
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const send = (delta: Record<string, unknown>, finish: string | null = null) =>
    res.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
    );
  send({ role: "assistant", content: "" });
  if (step.kind === "text") {
    // Word by word, as a real server streams tokens.
    for (const piece of step.content.match(/\S+\s*/g) ?? []) send({ content: piece });
    send({}, "stop");
  } else {
    for (const call of toolCalls!) {
      // The name first, then the arguments in two pieces, as OpenAI does.
      send({ tool_calls: [{ index: call.index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
      const half = Math.ceil(call.function.arguments.length / 2);
      send({ tool_calls: [{ index: call.index, function: { arguments: call.function.arguments.slice(0, half) } }] });
      send({ tool_calls: [{ index: call.index, function: { arguments: call.function.arguments.slice(half) } }] });
    }
    send({}, "tool_calls");
  }
  res.end("data: [DONE]\n\n");
}
