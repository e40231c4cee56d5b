import express from "express";

/**
 * `/healthz`: the process answers. `/readyz`: the backends it needs answer too (503 naming those that
 * do not), so a load balancer stops sending requests while the database restarts.
 */
export function healthRoutes(readiness: () => Promise<string[]>): express.Router {
  const router = express.Router();
  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  router.get("/readyz", async (_req, res) => {
    const down = await readiness();
    res.status(down.length ? 503 : 200).json(down.length ? { status: "unavailable", down } : { status: "ready" });
  });
  return router;
}
