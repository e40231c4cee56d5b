/**
 * Where a server's CPU goes, by layer: a V8 CPU profile taken while a case is under load (the profiler
 * `node --cpu-prof` starts, driven in-process through node:inspector so it covers exactly the measured
 * window), each sample's self time given to the layer its function's source file belongs to.
 *
 * Attribution is by the file of the function a sample was in, never by who called it: the pg driver
 * parsing a row is "SQL" whether the key lookup or a resolver asked for it, and time in a native
 * builtin counts for the JavaScript function that called it (JSON.stringify inside express's
 * `stringify` is serialisation). Simple on purpose: a regression shows up in the layer whose code runs.
 */
import fs from "node:fs";
import inspector from "node:inspector";
import path from "node:path";

export const LAYERS = [
  "HTTP parsing and writing (node)",
  "express routing and route tables",
  "security headers",
  "request id and origin",
  "logging",
  "metrics",
  "authentication and key lookup",
  "rate limiting",
  "cost control",
  "compiled operation and resolvers",
  "DataLoader and SQL (pg, Sequelize)",
  "JSON serialisation",
  "garbage collection",
  "other",
] as const;
export type Layer = (typeof LAYERS)[number];

type CallFrame = { functionName: string; url: string };
type ProfileNode = { id: number; callFrame: CallFrame; hitCount?: number };
export type CpuProfile = { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] };

/** Ordered rules: the first whose test matches a frame names its layer. Paths are matched with forward slashes. */
const RULES: Array<[Layer, (file: string, fn: string) => boolean]> = [
  ["garbage collection", (_file, fn) => fn === "(garbage collector)"],
  // JSON.stringify is a builtin: its samples land in the JS function that called it.
  [
    "JSON serialisation",
    (file, fn) =>
      (/express\/lib\/response\.js$/.test(file) && fn === "stringify") ||
      (/\/rest-adapter\/query-plan\.js$/.test(file) && fn === "responseJson") ||
      /fast-json-stringify|\/json-serialis/.test(file) ||
      (/@apollo\/server\//.test(file) && /stringify/i.test(fn)),
  ],
  ["security headers", (file) => /\/node_modules\/helmet\/|\/security-headers\.js$/.test(file)],
  [
    "request id and origin",
    (file, fn) => /\/request-id\.js$|\/query-credentials\.js$|\/audit-context\.js$/.test(file) || fn === "enterRequestOrigin",
  ],
  ["logging", (file) => /\/node_modules\/(pino|sonic-boom|pino-std-serializers)\/|\/request-log\.js$|\/common\/logger\.js$/.test(file)],
  ["metrics", (file) => /\/node_modules\/prom-client\/|\/metrics\/metrics\.js$|\/metrics\.http\.js$/.test(file)],
  ["rate limiting", (file) => /\/node_modules\/rate-limiter-flexible\/|\/rate-limit\.js$/.test(file)],
  ["cost control", (file) => /\/cost-control\.js$|\/operation-limits\.js$|\/cost-hints\.js$/.test(file)],
  [
    "authentication and key lookup",
    (file) => /\/authenticate\.js$|\/api-key[.-][\w.-]*\.js$|\/session\.service\.js$|\/internal\/crypto\/hash/.test(file),
  ],
  [
    "DataLoader and SQL (pg, Sequelize)",
    (file) =>
      /\/node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-\w+|sequelize|dataloader)\/|\.repository\.js$|\/common\/sql\.js$|\/db\/database\.js$/.test(
        file,
      ),
  ],
  [
    "express routing and route tables",
    (file) =>
      /\/node_modules\/(express|router|finalhandler|body-parser|qs|parseurl|path-to-regexp|type-is|content-type|on-finished|accepts|negotiator|send|proxy-addr|forwarded|@as-integrations\/express5)\//.test(
        file,
      ) || /\/rest-router\.js$|\/respond\.js$|\/routes\/[\w-]+\.js$|\/health\.js$|\.router\.js$|\/admin-console\.js$/.test(file),
  ],
  [
    "compiled operation and resolvers",
    (file, fn) =>
      /\/node_modules\/(graphql|graphql-jit|@apollo\/server|@graphql-tools|type-graphql|class-validator)\//.test(file) ||
      /\/rest-adapter\/|\/transports\/graphql\/|\/src\/finance\/|\/src\/audit\/|\/src\/app\/|\/bench\/rest\.bench\.js$/.test(file) ||
      // Code graphql-jit generates (new Function) has no file; V8's own entries are in parentheses.
      (file === "" && fn !== "" && !fn.startsWith("(")),
  ],
  [
    "HTTP parsing and writing (node)",
    (file, fn) =>
      /^node:(_http_|http$|net$|internal\/(http|streams|stream_base_commons|js_stream_socket)|stream$|events$|internal\/url$)/.test(file) ||
      fn === "parserOnHeadersComplete" ||
      fn === "parserOnBody" ||
      fn === "parserOnMessageComplete" ||
      // The socket write the response ends in (native, no file).
      fn === "writev" ||
      fn === "writeBuffer" ||
      fn === "writeUtf8String",
  ],
];

function layerOf(frame: CallFrame): Layer {
  const file = frame.url.replace(/\\/g, "/").replace(/^file:\/\//, "");
  for (const [layer, test] of RULES) if (test(file, frame.functionName)) return layer;
  return "other";
}

export type LayerTable = {
  /** Microseconds of CPU per request, by layer (the profiler's idle time excluded). */
  perRequestUs: Record<Layer, number>;
  /** The sum over layers. */
  totalUs: number;
  /** The files whose self time made up most of "other", so it is never a black box. */
  otherTop: Array<{ where: string; us: number }>;
};

/**
 * Sums the profile's self time per layer and divides by the requests served while it ran. The
 * profiler's clock is wall time (a sample taken while the machine ran something else still counts), so
 * when the process's own CPU time over the window is given, the layers are scaled to add up to it:
 * the profile says which share each layer took, the process's CPU time how much there was.
 */
export function summarise(profile: CpuProfile, requests: number, processCpuUs?: number): LayerTable {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  // Each sample's time is the delta to the next one (V8's own convention for self time).
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i + 1] ?? 0;
    selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + Math.max(0, delta));
  }
  const perRequestUs = Object.fromEntries(LAYERS.map((layer) => [layer, 0])) as Record<Layer, number>;
  const other = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") continue;
    const layer = layerOf(frame);
    perRequestUs[layer] += us;
    if (layer === "other") {
      const where = `${frame.functionName || "(anonymous)"} ${frame.url ? path.basename(frame.url) : ""}`.trim();
      other.set(where, (other.get(where) ?? 0) + us);
    }
  }
  const sampled = LAYERS.reduce((sum, layer) => sum + perRequestUs[layer], 0);
  const divisor = Math.max(1, requests) * (processCpuUs !== undefined && sampled > 0 ? sampled / processCpuUs : 1);
  for (const layer of LAYERS) perRequestUs[layer] /= divisor;
  return {
    perRequestUs,
    totalUs: LAYERS.reduce((sum, layer) => sum + perRequestUs[layer], 0),
    otherTop: [...other.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([where, us]) => ({ where, us: us / divisor })),
  };
}

/**
 * The same shares scaled to `totalUs`: the server CPU per request of the measured (unprofiled) rounds,
 * so the table adds up to the figure the targets judge and carries none of the profiler's own cost.
 */
export function scaledTo(table: LayerTable, totalUs: number): LayerTable {
  const factor = table.totalUs > 0 ? totalUs / table.totalUs : 0;
  return {
    perRequestUs: Object.fromEntries(LAYERS.map((layer) => [layer, table.perRequestUs[layer] * factor])) as Record<Layer, number>,
    totalUs: table.totalUs * factor,
    otherTop: table.otherTop.map((entry) => ({ where: entry.where, us: entry.us * factor })),
  };
}

/** Profiles this process while `work` runs; writes the .cpuprofile (DevTools opens it) when `saveAs` is given. */
export async function profileWhile<T>(
  work: () => Promise<T>,
  options: { samplingIntervalUs: number; saveAs?: string },
): Promise<{ result: T; profile: CpuProfile }> {
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<any>((resolve, reject) => session.post(method, params ?? {}, (error, reply) => (error ? reject(error) : resolve(reply))));
  try {
    await post("Profiler.enable");
    await post("Profiler.setSamplingInterval", { interval: options.samplingIntervalUs });
    await post("Profiler.start");
    const result = await work();
    const { profile } = (await post("Profiler.stop")) as { profile: CpuProfile };
    if (options.saveAs) {
      fs.mkdirSync(path.dirname(options.saveAs), { recursive: true });
      fs.writeFileSync(options.saveAs, JSON.stringify(profile));
    }
    return { result, profile };
  } finally {
    session.disconnect();
  }
}
