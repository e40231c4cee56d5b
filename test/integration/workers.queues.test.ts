import { QueueEvents } from "bullmq";
import IORedis from "ioredis";
import { CHAIN_CONSUMERS, JOBS, LOOPS, QueueName } from "../../workers/queues";
import { maintenanceHandlers } from "../../workers/maintenance.processor";
import { checkHandlers, checkRunners, HANDLERS, LOOP_HANDLERS, WorkerHost } from "../../workers/worker-host";
import { ChainConsumerPump } from "../../src/audit/delivery/chain-consumer.pump";
import type { ChainConsumerHandler } from "../../src/audit/delivery/chain-consumer.handler";
import { createLogger } from "../../src/platform/common/logger";
import { redisUrl } from "../helpers/database-urls";
import { createUser } from "../helpers/fixtures";
import { startTestApp, type TestApp } from "../helpers/test-app";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ roles: { api: false, workers: true } });
});
afterAll(() => app.stop());

describe("workers", () => {
  test("register the recurring schedules", async () => {
    const schedulers = await app.runtime.queues.queue(QueueName.Maintenance).getJobSchedulers();
    expect(schedulers.map((scheduler) => scheduler.key)).toContain("prune-api-keys-daily");
  });

  test("register the bank-sync refresh: every 10 minutes it enqueues the connections whose interval has passed", async () => {
    const schedulers = await app.runtime.queues.queue(QueueName.BankSync).getJobSchedulers();
    const refresh = schedulers.find((scheduler) => scheduler.key === "bank-sync-refresh");
    expect(refresh).toMatchObject({ name: JOBS[QueueName.BankSync].refreshConnections, every: 10 * 60 * 1000 });
  });

  test("prune-api-keys deletes keys retired more than 90 days ago and keeps the rest", async () => {
    const { services, sequelize } = app.runtime;
    const user = await createUser(services);
    const longRevoked = await services.apiKeys.create(user.userId, { scope: "read" });
    const recentlyRevoked = await services.apiKeys.create(user.userId, { scope: "read" });
    const longExpired = await services.apiKeys.create(user.userId, { scope: "read" });
    await sequelize.query("UPDATE api_keys SET revoked_at = now() - interval '91 days' WHERE id = $1", { bind: [longRevoked.apiKey.id] });
    await sequelize.query("UPDATE api_keys SET revoked_at = now() - interval '5 days' WHERE id = $1", {
      bind: [recentlyRevoked.apiKey.id],
    });
    await sequelize.query("UPDATE api_keys SET expires_at = now() - interval '100 days' WHERE id = $1", { bind: [longExpired.apiKey.id] });

    const queue = app.runtime.queues.queue(QueueName.Maintenance);
    const connection = new IORedis(redisUrl(), { maxRetriesPerRequest: null });
    const events = new QueueEvents(QueueName.Maintenance, { connection, prefix: app.runtime.config.redisPrefix });
    try {
      await events.waitUntilReady();
      const job = await queue.add(JOBS[QueueName.Maintenance].pruneApiKeys, {});
      expect(await job.waitUntilFinished(events, 15_000)).toEqual({ deleted: 2 });
    } finally {
      await events.close();
      connection.disconnect();
    }
    const remaining = (await services.apiKeys.listForUser(user.userId)).map((key) => key.id);
    expect(remaining).toContain(recentlyRevoked.apiKey.id);
    expect(remaining).not.toContain(longRevoked.apiKey.id);
    expect(remaining).not.toContain(longExpired.apiKey.id);
    expect(remaining).toHaveLength(3);
  });

  test("refuse to start when a declared job has no handler, or a handler no job", () => {
    expect(() => checkHandlers({ [QueueName.Maintenance]: {} })).toThrow("no handler for job prune-api-keys");
    const handler = async () => undefined;
    expect(() => checkHandlers({ [QueueName.Maintenance]: { ...maintenanceHandlers, "typo-job": handler } })).toThrow(
      "handler for undeclared job typo-job",
    );
  });

  test("refuse to start when a declared chain consumer or loop has no handler, or a handler no declaration", () => {
    const declared = { jobs: HANDLERS, chainConsumers: Object.values(CHAIN_CONSUMERS), loops: LOOP_HANDLERS };
    expect(() => checkRunners(declared)).not.toThrow();
    expect(() => checkRunners({ ...declared, chainConsumers: [CHAIN_CONSUMERS.streamDestinations] })).toThrow(
      "no chain consumer handler for prefix alerts:",
    );
    expect(() => checkRunners({ ...declared, chainConsumers: [...declared.chainConsumers, "typo:"] })).toThrow(
      "chain consumer handler for undeclared prefix typo:",
    );
    const { [LOOPS.alertDispatcher]: dispatcher, ...withoutDispatcher } = LOOP_HANDLERS;
    expect(() => checkRunners({ ...declared, loops: withoutDispatcher })).toThrow("loop alert-dispatcher: no handler");
    expect(() => checkRunners({ ...declared, loops: { ...LOOP_HANDLERS, "typo-loop": dispatcher } })).toThrow(
      "handler for undeclared loop typo-loop",
    );
    expect(() => checkRunners({ ...declared, jobs: { ...HANDLERS, [QueueName.Maintenance]: {} } })).toThrow(
      "no handler for job prune-api-keys",
    );
  });

  test("a worker host whose pump serves a consumer queues.ts does not declare refuses to start", async () => {
    const { services, sequelize, config } = app.runtime;
    const stray: ChainConsumerHandler = {
      prefix: "stray:",
      turn: async (consumer) => ({ position: consumer.position }),
      record: async () => undefined,
    };
    const logger = createLogger("silent");
    const pump = new ChainConsumerPump(
      sequelize,
      services.repositories.streamConsumers,
      [stray],
      config.streaming,
      services.events,
      logger,
    );
    const host = new WorkerHost(app.runtime.queues, { services: { ...services, streamPump: pump }, logger });
    await expect(host.start()).rejects.toThrow("no chain consumer handler for prefix destination:");
  });
});
