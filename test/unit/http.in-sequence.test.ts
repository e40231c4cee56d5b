import http from "node:http";
import express, { type NextFunction, type Request, type Response } from "express";
import { inSequence } from "../../src/transports/http/in-sequence";

/** Handlers folded into one layer behave as the layers they replace: order, early answers, errors, leaving. */
describe("handlers in sequence", () => {
  async function get(app: express.Express, path: string): Promise<{ status: number; body: string }> {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      const response = await fetch(`http://127.0.0.1:${port}${path}`);
      return { status: response.status, body: await response.text() };
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  function appWith(...handlers: express.RequestHandler[]): express.Express {
    const app = express();
    app.use(inSequence(...handlers));
    app.get("/after", (_req, res) => res.send(`after ${String(res.locals.seen)}`));
    app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => res.status(500).send(`caught ${error.message}`));
    return app;
  }

  const mark = (name: string) => (_req: Request, res: Response, next: NextFunction) => {
    res.locals.seen = `${String(res.locals.seen ?? "")}${name}`;
    next();
  };

  test("runs each handler in order, then the layers after it", async () => {
    expect(await get(appWith(mark("a"), mark("b"), mark("c")), "/after")).toEqual({ status: 200, body: "after abc" });
  });

  test("a handler that answers ends the request there", async () => {
    const answer = (_req: Request, res: Response) => void res.status(202).send("answered");
    expect(await get(appWith(mark("a"), answer, mark("never")), "/after")).toEqual({ status: 202, body: "answered" });
  });

  test("next(error), a throw and a rejected promise each reach the error handlers and skip the rest", async () => {
    const failing = [
      (_req: Request, _res: Response, next: NextFunction) => next(new Error("passed")),
      () => {
        throw new Error("thrown");
      },
      async () => {
        await Promise.resolve();
        throw new Error("rejected");
      },
    ];
    for (const [index, handler] of failing.entries()) {
      const message = ["passed", "thrown", "rejected"][index];
      expect(await get(appWith(mark("a"), handler, mark("never")), "/after")).toEqual({ status: 500, body: `caught ${message}` });
    }
  });
});
