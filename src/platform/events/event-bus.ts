import IORedis from "ioredis";
import { Client } from "pg";
import type { PubSub } from "type-graphql";
import type { Logger } from "../common/logger";
import type { EventPayload, PublishArgs, ScopeArgs, TopicName } from "./catalogue";

/**
 * Events that must reach every process: a subscriber connected to one API process sees what any other
 * API or worker process publishes. Redis pub/sub when Redis is configured, PostgreSQL LISTEN/NOTIFY
 * otherwise. Delivery is at-most-once and live only; durable facts live in tables, and an event says
 * "look, this changed". Topics and payloads are those of `catalogue.ts`.
 */
export interface EventBus {
  publish<T extends TopicName>(topic: T, ...args: PublishArgs<T>): void;
  subscribe<T extends TopicName>(topic: T, ...scope: ScopeArgs<T>): AsyncIterable<EventPayload<T>>;
  /**
   * The same bus as type-graphql's untyped PubSub, for `@Subscription({ topics, topicId })`:
   * `topics: Topic.X, topicId` receives what `publish(Topic.X, id, …)` sends.
   */
  readonly pubSub: PubSub;
  /** Resolves once the bus is subscribed to its transport, so nothing published after it is missed. */
  ready(): Promise<void>;
  /**
   * Calls `observer` with each event's age in seconds when it arrives in this process (from any process:
   * the event bus lag of /metrics), and tells how many of this process's publishes are still leaving.
   */
  observe(observer: (ageSeconds: number) => void): { pendingPublishes(): number };
  /**
   * Resolves once what this process published so far has left it (or after `timeoutMs`, so a transport
   * that is away delays no caller for long): a change that other processes must see before its caller
   * hears "done" (a revoked key) publishes, then waits for this.
   */
  flush(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** `sentAt` (ms since the epoch, the publisher's clock) measures the bus's lag; older publishers leave it out. */
type Envelope = { topic: string; payload: unknown; sentAt?: number };
type Listener = (payload: unknown) => void;

/** PostgreSQL refuses NOTIFY payloads of 8000 bytes or more; events are meant to be small anyway. */
const MAX_NOTIFY_BYTES = 7900;

function topicOf(routingKey: string, dynamicId?: unknown): string {
  return dynamicId === undefined ? routingKey : `${routingKey}:${String(dynamicId)}`;
}

/** publish(key, payload) or publish(key, id, payload), mirroring subscribe(key, id?). */
function envelopeOf(routingKey: string, args: unknown[]): Envelope {
  const sentAt = Date.now();
  return args.length >= 2
    ? { topic: topicOf(routingKey, args[0]), payload: args[1], sentAt }
    : { topic: routingKey, payload: args[0], sentAt };
}

/** Fans one transport subscription out to this process's listeners, each an async iterator. */
abstract class FanOutBus implements EventBus {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly inFlight = new Set<Promise<void>>();
  private observer: ((ageSeconds: number) => void) | null = null;

  constructor(protected readonly logger: Logger) {}

  protected abstract send(envelope: Envelope): Promise<void>;
  abstract ready(): Promise<void>;
  abstract close(): Promise<void>;

  readonly pubSub: PubSub = {
    publish: (routingKey: string, ...args: unknown[]) => this.sendInBackground(routingKey, args),
    subscribe: (routingKey: string, dynamicId?: unknown) => this.listen(topicOf(routingKey, dynamicId)),
  };

  publish<T extends TopicName>(topic: T, ...args: PublishArgs<T>): void {
    this.sendInBackground(topic, args);
  }

  subscribe<T extends TopicName>(topic: T, ...scope: ScopeArgs<T>): AsyncIterable<EventPayload<T>> {
    // The transport carries JSON; the catalogue is what says which payload a topic carries.
    return this.listen(topicOf(topic, scope[0])) as AsyncIterable<EventPayload<T>>;
  }

  private sendInBackground(routingKey: string, args: unknown[]): void {
    const sending = this.send(envelopeOf(routingKey, args))
      .catch((error) => this.logger.warn({ err: error, routingKey }, "event not published"))
      .finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  observe(observer: (ageSeconds: number) => void): { pendingPublishes(): number } {
    this.observer = observer;
    return { pendingPublishes: () => this.inFlight.size };
  }

  /** Waits for events already published to leave, so a short-lived process (the CLI) does not drop them on close. */
  protected async drain(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  async flush(timeoutMs = 2000): Promise<void> {
    if (this.inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.drain(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
  }

  protected deliver(raw: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(raw) as Envelope;
    } catch {
      return;
    }
    if (this.observer && typeof envelope.sentAt === "number") this.observer(Math.max(0, Date.now() - envelope.sentAt) / 1000);
    for (const listener of this.listeners.get(envelope.topic) ?? []) listener(envelope.payload);
  }

  private listen(topic: string): AsyncIterable<unknown> {
    const listeners = this.listeners;
    return {
      [Symbol.asyncIterator](): AsyncIterator<unknown> {
        const queued: unknown[] = [];
        let waiting: ((result: IteratorResult<unknown>) => void) | null = null;
        let done = false;
        const listener: Listener = (payload) => {
          if (waiting) {
            waiting({ value: payload, done: false });
            waiting = null;
          } else queued.push(payload);
        };
        if (!listeners.has(topic)) listeners.set(topic, new Set());
        listeners.get(topic)!.add(listener);
        const finish = (): Promise<IteratorResult<unknown>> => {
          done = true;
          listeners.get(topic)?.delete(listener);
          if (listeners.get(topic)?.size === 0) listeners.delete(topic);
          waiting?.({ value: undefined, done: true });
          waiting = null;
          return Promise.resolve({ value: undefined, done: true });
        };
        return {
          next: () => {
            if (queued.length > 0) return Promise.resolve({ value: queued.shift(), done: false });
            if (done) return Promise.resolve({ value: undefined, done: true });
            return new Promise((resolve) => (waiting = resolve));
          },
          return: finish,
          throw: finish,
        };
      },
    };
  }
}

class RedisEventBus extends FanOutBus {
  private readonly publisher: IORedis;
  private readonly subscriber: IORedis;
  private readonly channel: string;
  private readonly subscribed: Promise<unknown>;

  constructor(url: string, prefix: string, logger: Logger) {
    super(logger);
    this.channel = `${prefix}:events`;
    this.publisher = new IORedis(url, { maxRetriesPerRequest: 2 });
    // ioredis resubscribes by itself once it reconnects (test/faults/backends.test.ts, Redis restarted).
    this.subscriber = new IORedis(url);
    // Without a listener ioredis prints every failed reconnection attempt to stderr while Redis is away.
    for (const connection of [this.publisher, this.subscriber]) {
      connection.on("error", (error: Error) => logger.debug({ err: error }, "event bus connection to Redis failed; reconnecting"));
    }
    this.subscriber.on("message", (_channel: string, message: string) => this.deliver(message));
    this.subscribed = this.subscriber.subscribe(this.channel);
    // A short-lived process (the CLI) may close before SUBSCRIBE is answered: the pending command then rejects
    // ("Connection is closed") with nobody awaiting it, an unhandled rejection that kills the process. ready()
    // still hands the rejection to whoever waits for it.
    this.subscribed.catch(() => undefined);
  }

  protected async send(envelope: Envelope): Promise<void> {
    await this.publisher.publish(this.channel, JSON.stringify(envelope));
  }

  async ready(): Promise<void> {
    await this.subscribed;
  }

  async close(): Promise<void> {
    await this.drain();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}

class PostgresEventBus extends FanOutBus {
  private readonly listener: Client;
  private readonly publisher: Client;
  private readonly connected: Promise<unknown>;
  private static readonly CHANNEL = "fg_events";

  constructor(databaseUrl: string, logger: Logger) {
    super(logger);
    this.listener = new Client({ connectionString: databaseUrl });
    this.publisher = new Client({ connectionString: databaseUrl });
    this.listener.on("notification", (message) => message.payload && this.deliver(message.payload));
    this.connected = Promise.all([
      this.listener.connect().then(() => this.listener.query(`LISTEN ${PostgresEventBus.CHANNEL}`)),
      this.publisher.connect(),
    ]);
  }

  /** The publisher's last NOTIFY: one client runs one query at a time (pg queues more, with a deprecation warning, and pg 9 will not). */
  private sending: Promise<unknown> = Promise.resolve();

  protected async send(envelope: Envelope): Promise<void> {
    const text = JSON.stringify(envelope);
    if (Buffer.byteLength(text) > MAX_NOTIFY_BYTES) throw new Error(`event on ${envelope.topic} is too large for NOTIFY`);
    // Chained, so events leave in the order they were sent and never two queries at once on the client.
    const sent = this.sending.then(async () => {
      await this.connected;
      await this.publisher.query("SELECT pg_notify($1, $2)", [PostgresEventBus.CHANNEL, text]);
    });
    this.sending = sent.catch(() => undefined);
    await sent;
  }

  async ready(): Promise<void> {
    await this.connected;
  }

  async close(): Promise<void> {
    await this.drain();
    // A short-lived process (the CLI) may close while the clients are still connecting; ending them then makes
    // the pending LISTEN reject with nobody awaiting it, an unhandled rejection that kills the process.
    await this.connected.catch(() => undefined);
    await Promise.allSettled([this.listener.end(), this.publisher.end()]);
  }
}

/** Delivers within this process only: for schema emission and tools that run no server. */
export class LocalEventBus extends FanOutBus {
  protected async send(envelope: Envelope): Promise<void> {
    this.deliver(JSON.stringify(envelope));
  }

  async ready(): Promise<void> {}

  async close(): Promise<void> {}
}

export function createEventBus(options: { redisUrl?: string; redisPrefix: string; databaseUrl: string }, logger: Logger): EventBus {
  return options.redisUrl
    ? new RedisEventBus(options.redisUrl, options.redisPrefix, logger)
    : new PostgresEventBus(options.databaseUrl, logger);
}
