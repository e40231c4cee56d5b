import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

/**
 * Reads the shell examples of README.md and the pages of docs/, and the outputs they print for them, and
 * compares those outputs with what the commands really print. Used by the walk-through tests
 * (test/e2e/docs.*.walkthrough.test.ts, test/e2e/audit-exports-walkthrough.test.ts).
 *
 * A step is one or more command lines and the output the page shows for them: the `# …` comment lines
 * right after the commands, or a ```json / ``` block right after the ```sh block (for its last step).
 */

/** A fenced code block, dedented (the REST conventions' example sits inside a list item). */
export type Fence = { lang: string; line: number; end: number; lines: string[]; section: string; subsection: string };

export type Step = {
  /** The page, as a path from the project folder (`README.md`, `docs/rest-api.md`). */
  file: string;
  section: string;
  /** Line (1-based) of the step's first command line in its page. */
  line: number;
  command: string;
  /** What the page prints after the command, `# ` prefixes and `(notes)` removed; null when it prints nothing. */
  expected: string | null;
};

export function readFences(readme: string): Fence[] {
  const lines = readme.split("\n");
  const fences: Fence[] = [];
  let section = "";
  let subsection = "";
  for (let index = 0; index < lines.length; index++) {
    const heading = /^(##|###) (.+)$/.exec(lines[index]);
    if (heading) {
      if (heading[1] === "##") [section, subsection] = [heading[2], ""];
      else subsection = heading[2];
      continue;
    }
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[index]);
    if (!open) continue;
    const [, indent, lang] = open;
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && lines[end].trimEnd() !== `${indent}\`\`\``) body.push(lines[end++].slice(indent.length));
    fences.push({ lang, line: index + 1, end: end + 1, lines: body, section, subsection });
    index = end;
  }
  return fences;
}

/** Text after a printed output that explains it, e.g. `(exit status 1)` or `(seconds until the window resets)`. */
const NOTE = /\s{2,}\([^)]*\)\s*$/;

/** A page of the project, read as its walk-through test reads it. */
export function readPage(root: string, file: string): { file: string; text: string } {
  return { file, text: fs.readFileSync(path.join(root, file), "utf8") };
}

/** The steps of one `## section` of a page (every section when `section` is null), in page order. */
export function stepsOf(page: { file: string; text: string }, section: string | null): Step[] {
  const lines = page.text.split("\n");
  const fences = readFences(page.text).filter((fence) => section === null || fence.section === section);
  if (fences.length === 0) throw new Error(`${page.file} has no code blocks under "## ${section}"`);
  const steps: Step[] = [];
  let previousShell: Fence | null = null;
  for (const fence of fences) {
    if (fence.lang === "sh") {
      steps.push(...shellSteps(fence, page.file));
      previousShell = fence;
      continue;
    }
    const isOutput = fence.lang === "json" || fence.lang === "";
    const directlyAfterShell = previousShell !== null && lines.slice(previousShell.end, fence.line - 1).every((line) => line.trim() === "");
    if (isOutput && directlyAfterShell) {
      const last = steps[steps.length - 1];
      if (last.expected !== null) throw new Error(`${page.file}:${fence.line}: output block after a step that already shows its output`);
      last.expected = fence.lines.map((line) => line.replace(NOTE, "")).join("\n");
    }
    previousShell = null;
  }
  return steps;
}

function shellSteps(fence: Fence, file: string): Step[] {
  const steps: Array<{ line: number; commands: string[]; outputs: string[] }> = [];
  let current: (typeof steps)[number] | null = null;
  let afterBlank = false;
  fence.lines.forEach((text, offset) => {
    const trimmed = text.trim();
    if (trimmed === "") {
      afterBlank = true;
    } else if (trimmed.startsWith("#")) {
      // Comments before any command are notes to the reader; after a command they show its output.
      if (current) current.outputs.push(trimmed.replace(/^# ?/, "").replace(NOTE, ""));
    } else {
      if (!current || current.outputs.length > 0 || afterBlank) {
        current = { line: fence.line + 1 + offset, commands: [], outputs: [] };
        steps.push(current);
      }
      current.commands.push(text);
      afterBlank = false;
    }
  });
  return steps.map((step) => ({
    file,
    section: fence.section,
    line: step.line,
    command: step.commands.join("\n"),
    expected: step.outputs.length > 0 ? step.outputs.join("\n") : null,
  }));
}

// ---------------------------------------------------------------------------------------------------
// unknown values. The README prints JSON, Node's printout of a value (what its `json` helper shows:
// unquoted keys, single quotes), and plain lines (status codes, headers). `…` stands for what it leaves
// out: a whole value, further array elements or object members, or part of a string.

const ELLIPSIS = Symbol("…");
const MORE = Symbol("more members");

class Reader {
  constructor(
    readonly text: string,
    public pos = 0,
  ) {}

  skipSpace(): void {
    while (this.pos < this.text.length && /\s/.test(this.text[this.pos])) this.pos++;
  }

  value(): unknown {
    this.skipSpace();
    const rest = this.text.slice(this.pos);
    const char = rest[0];
    if (char === "{") return this.object();
    if (char === "[") return this.array();
    if (char === "…") {
      this.pos++;
      return ELLIPSIS;
    }
    const quoted = /^"(?:[^"\\\n]|\\.)*"/.exec(rest) ?? /^'(?:[^'\\\n]|\\.)*'/.exec(rest);
    if (quoted) {
      this.pos += quoted[0].length;
      const inner = quoted[0].slice(1, -1);
      return char === '"' ? JSON.parse(quoted[0]) : inner.replace(/\\(.)/g, (_, escaped: string) => (escaped === "n" ? "\n" : escaped));
    }
    const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(rest);
    if (number) {
      this.pos += number[0].length;
      return Number(number[0]);
    }
    const word = /^(true|false|null)\b/.exec(rest);
    if (word) {
      this.pos += word[0].length;
      return JSON.parse(word[0]);
    }
    throw new Error(`cannot read a value at "${rest.slice(0, 20)}"`);
  }

  private expect(char: string): void {
    this.skipSpace();
    if (this.text[this.pos] !== char) throw new Error(`expected "${char}" at "${this.text.slice(this.pos, this.pos + 20)}"`);
    this.pos++;
  }

  /** True and consumed when the next non-space character is `char`. */
  private take(char: string): boolean {
    this.skipSpace();
    if (this.text[this.pos] !== char) return false;
    this.pos++;
    return true;
  }

  private object(): Record<string | symbol, unknown> {
    this.expect("{");
    const result: Record<string | symbol, unknown> = {};
    if (this.take("}")) return result;
    do {
      this.skipSpace();
      if (this.take("…")) {
        result[MORE] = true;
        continue;
      }
      const rest = this.text.slice(this.pos);
      const key = /^"(?:[^"\\]|\\.)*"/.exec(rest) ?? /^'(?:[^'\\]|\\.)*'/.exec(rest) ?? /^[A-Za-z_$][\w$]*/.exec(rest);
      if (!key) throw new Error(`expected a key at "${rest.slice(0, 20)}"`);
      this.pos += key[0].length;
      this.expect(":");
      result[key[0].startsWith('"') ? JSON.parse(key[0]) : /^'/.test(key[0]) ? key[0].slice(1, -1) : key[0]] = this.value();
    } while (this.take(","));
    this.expect("}");
    return result;
  }

  private array(): unknown[] {
    this.expect("[");
    const result: unknown[] = [];
    if (this.take("]")) return result;
    do result.push(this.value());
    while (this.take(","));
    this.expect("]");
    return result;
  }
}

/** A printed output as a list of records: values (objects, arrays) and plain lines. */
type OutputRecord = { value: unknown } | { text: string };

export function readOutput(text: string): OutputRecord[] {
  const normalized = text.replace(/\r\n/g, "\n");
  const records: OutputRecord[] = [];
  const reader = new Reader(normalized);
  for (reader.skipSpace(); reader.pos < normalized.length; reader.skipSpace()) {
    const start = reader.pos;
    if (normalized[start] === "{" || normalized[start] === "[") {
      try {
        records.push({ value: reader.value() });
        continue;
      } catch {
        reader.pos = start;
      }
    }
    const lineEnd = normalized.indexOf("\n", start);
    const end = lineEnd === -1 ? normalized.length : lineEnd;
    records.push({ text: normalized.slice(start, end).trim() });
    reader.pos = end;
  }
  return records;
}

// ---------------------------------------------------------------------------------------------------
// Comparison. Keys, status codes, error codes and messages, names, classifications, page and per_page
// must be equal. What the page says differs from run to run is compared by its form: ids (UUIDs),
// dates, timestamps, counts and amounts (numbers and `$` amounts keep their sign). The same shortened id
// shown twice (`55f220c7-…`) must be the same id both times. Paths listed as illustrative (one sample
// of generated data) are compared by shape only: keys and types, any value where the page shows null.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const MONEY = /^-?\$[\d,]+\.\d{2}$/;
/** Keys whose numbers and `$` amounts depend on the generated data and the day. */
const VARYING_KEY = /count|total|amount|cents/i;

export type Comparison = {
  /** Path patterns (`transactions.*.name`, `*` any key or index) compared by shape only. */
  illustrative: string[];
  /** Shortened ids seen so far (`55f220c7-`) and the real id each stood for, shared across steps. */
  shortIds: Map<string, string>;
};

const show = (value: unknown) => (value === ELLIPSIS ? "…" : JSON.stringify(value));
const isObject = (value: unknown): value is Record<string | symbol, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function matchesPattern(path: string[], pattern: string): boolean {
  const parts = pattern.split(".");
  return parts.length === path.length && parts.every((part, index) => part === "*" || part === path[index]);
}

/** Problems found comparing what the page prints (`expected`) with what was printed (`actual`). */
export function compareOutput(expected: string, actual: string, comparison: Comparison): string[] {
  const want = readOutput(expected);
  const got = readOutput(actual);
  const problems: string[] = [];
  if (want.length !== got.length) {
    return [`the page shows ${want.length} output record(s), the command printed ${got.length}`];
  }
  want.forEach((record, index) => {
    const other = got[index];
    if ("text" in record) {
      if (!("text" in other)) problems.push(`expected the line ${show(record.text)}, got a value ${show(other.value)}`);
      else if (!textMatches(record.text, other.text)) problems.push(`expected the line ${show(record.text)}, got ${show(other.text)}`);
    } else if ("text" in other) {
      problems.push(`expected a value like ${show(record.value)}, got the line ${show(other.text)}`);
    } else {
      compareValue(record.value, other.value, [], comparison, problems);
    }
  });
  return problems;
}

/** A line that is only a number (a status code) must be equal; in other lines any number stands for any number. */
function textMatches(expected: string, actual: string): boolean {
  if (/^\d+$/.test(expected)) return expected === actual;
  const pattern = expected
    .split(/(\d+(?:\.\d+)?|…)/)
    .map((part, index) => (index % 2 === 0 ? part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : part === "…" ? ".*" : "\\d+(?:\\.\\d+)?"))
    .join("");
  return new RegExp(`^${pattern}$`).test(actual);
}

function compareValue(expected: unknown, actual: unknown, path: string[], comparison: Comparison, problems: string[]): void {
  const where = path.length ? path.join(".") : "(top level)";
  const fail = (message: string) => problems.push(`${where}: ${message}`);
  if (expected === ELLIPSIS) return;
  if (comparison.illustrative.some((pattern) => matchesPattern(path, pattern))) return compareShape(expected, actual, path, problems);
  const key = path[path.length - 1] ?? "";

  if (expected === null || typeof expected === "boolean") {
    if (actual !== expected) fail(`expected ${show(expected)}, got ${show(actual)}`);
  } else if (typeof expected === "number") {
    if (typeof actual !== "number") fail(`expected a number like ${expected}, got ${show(actual)}`);
    else if (VARYING_KEY.test(key) ? Math.sign(actual) !== Math.sign(expected) : actual !== expected)
      fail(`expected ${VARYING_KEY.test(key) ? `a number with the sign of ${expected}` : expected}, got ${actual}`);
  } else if (typeof expected === "string") {
    if (typeof actual !== "string") return void fail(`expected a string like ${show(expected)}, got ${show(actual)}`);
    const problem = compareString(expected, actual, key, comparison);
    if (problem) fail(problem);
  } else if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return void fail(`expected an array, got ${show(actual)}`);
    const more = expected[expected.length - 1] === ELLIPSIS;
    const items = more ? expected.slice(0, -1) : expected;
    if (more ? actual.length < items.length : actual.length !== items.length)
      return void fail(`expected ${more ? "at least " : ""}${items.length} element(s), got ${actual.length}: ${show(actual)}`);
    items.forEach((item, index) => compareValue(item, actual[index], [...path, String(index)], comparison, problems));
  } else if (isObject(expected)) {
    if (!isObject(actual)) return void fail(`expected an object, got ${show(actual)}`);
    const keys = Object.keys(expected);
    const missing = keys.filter((name) => !(name in actual));
    const unexpected = expected[MORE] ? [] : Object.keys(actual).filter((name) => !(name in expected));
    if (missing.length) fail(`missing key(s) ${missing.join(", ")}`);
    if (unexpected.length) fail(`key(s) the page does not show: ${unexpected.join(", ")}`);
    for (const name of keys) if (name in actual) compareValue(expected[name], actual[name], [...path, name], comparison, problems);
  }
}

function compareString(expected: string, actual: string, key: string, comparison: Comparison): string | null {
  if (expected.includes("…")) {
    const [prefix, suffix] = [expected.slice(0, expected.indexOf("…")), expected.slice(expected.indexOf("…") + 1)];
    if (/^[0-9a-f]{4,}-?$/.test(prefix)) {
      if (!UUID.test(actual)) return `expected an id, got ${show(actual)}`;
      const seen = comparison.shortIds.get(prefix);
      if (seen !== undefined && seen !== actual)
        return `the page shows the same id ${show(expected)} earlier, which was ${seen}; got ${actual}`;
      comparison.shortIds.set(prefix, actual);
      return null;
    }
    return actual.startsWith(prefix) && actual.endsWith(suffix) ? null : `expected ${show(expected)}, got ${show(actual)}`;
  }
  const form = [UUID, DATE, TIMESTAMP].find((pattern) => pattern.test(expected));
  if (form) return form.test(actual) ? null : `expected a value of the form of ${show(expected)}, got ${show(actual)}`;
  if (VARYING_KEY.test(key) && MONEY.test(expected)) {
    const sameSign = expected.startsWith("-") === actual.startsWith("-");
    return MONEY.test(actual) && sameSign ? null : `expected an amount with the sign of ${show(expected)}, got ${show(actual)}`;
  }
  return expected === actual ? null : `expected ${show(expected)}, got ${show(actual)}`;
}

/** Keys and types only; where the page shows null (no category, no transfer) any value fits. */
function compareShape(expected: unknown, actual: unknown, path: string[], problems: string[]): void {
  const fail = (message: string) => problems.push(`${path.join(".")}: ${message}`);
  if (expected === ELLIPSIS || expected === null) return;
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return void fail(`expected an array, got ${show(actual)}`);
    if (expected.length > 0 && expected[0] !== ELLIPSIS)
      actual.forEach((item, index) => compareShape(expected[0], item, [...path, String(index)], problems));
  } else if (isObject(expected)) {
    if (actual === null) return;
    if (!isObject(actual)) return void fail(`expected an object, got ${show(actual)}`);
    const missing = Object.keys(expected).filter((name) => !(name in actual));
    const unexpected = expected[MORE] ? [] : Object.keys(actual).filter((name) => !(name in expected));
    if (missing.length) fail(`missing key(s) ${missing.join(", ")}`);
    if (unexpected.length) fail(`key(s) the page does not show: ${unexpected.join(", ")}`);
    for (const name of Object.keys(expected)) if (name in actual) compareShape(expected[name], actual[name], [...path, name], problems);
  } else if (typeof actual !== typeof expected) {
    fail(`expected a ${typeof expected} like ${show(expected)}, got ${show(actual)}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Running steps: all of them in ONE bash process (so variables flow from block to block), exactly as
// printed but for the addresses, with a marker before each step on stdout and stderr and a line
// for each failing command (`set -o pipefail` and an ERR trap, so a failure inside `$(…)` or a pipe counts).

export type StepRun = { outputs: string[]; stderr: string[]; failures: string[][] };

export async function runSteps(
  steps: Step[],
  options: {
    /** What the page prints → what this run uses instead: addresses only (the service's, a sandbox's). */
    substitutions: Array<[string, string]>;
    cwd: string;
    env: NodeJS.ProcessEnv;
    timeoutMs?: number;
  },
): Promise<StepRun> {
  const parts = ["set -o pipefail", `trap 'printf "\\n@@FAILED %s\\n" "$?"' ERR`];
  steps.forEach((step, index) => {
    parts.push(`printf '\\n@@STEP ${index}\\n'; printf '\\n@@STEP ${index}\\n' >&2`);
    parts.push(options.substitutions.reduce((text, [from, to]) => text.split(from).join(to), step.command));
  });
  parts.push("printf '\\n@@STEP end\\n'; printf '\\n@@STEP end\\n' >&2", "exit 0");
  const { stdout, stderr, code } = await runBash(parts.join("\n"), {
    cwd: options.cwd,
    env: options.env,
    timeoutMs: options.timeoutMs ?? 120_000,
  });
  if (code !== 0) throw new Error(`bash exited with ${code}\n${stdout}\n${stderr}`);
  const perStep = (output: string) => output.split(/\n@@STEP (?:\d+|end)\n/).slice(1, steps.length + 1);
  const stdoutParts = perStep(stdout);
  if (stdoutParts.length !== steps.length) throw new Error(`expected ${steps.length} steps, got ${stdoutParts.length}:\n${stdout}`);
  return {
    outputs: stdoutParts.map((part) => part.replace(/\n@@FAILED \d+\n/g, "\n").trim()),
    stderr: perStep(stderr).map((part) => part.trim()),
    failures: stdoutParts.map((part) => [...part.matchAll(/\n@@FAILED (\d+)\n/g)].map((match) => match[1])),
  };
}

/** What went wrong, one entry per failing step naming its page line; empty when every step printed what the page shows. */
export function checkSteps(steps: Step[], run: StepRun, illustrativeOf: (step: Step) => string[] = () => []): string[] {
  const comparison: Comparison = { illustrative: [], shortIds: new Map() };
  const problems: string[] = [];
  steps.forEach((step, index) => {
    comparison.illustrative = illustrativeOf(step);
    const found = run.failures[index].map((status) => `a command exited with status ${status}`);
    if (step.expected !== null) found.push(...compareOutput(step.expected, run.outputs[index], comparison));
    if (found.length === 0) return;
    problems.push(
      [
        `${step.file}:${step.line} (${step.section}): ${step.command.split("\n")[0]}`,
        ...found.map((problem) => `  - ${problem}`),
        `  printed: ${clip(run.outputs[index]) || "(nothing)"}`,
        `  stderr: ${clip(run.stderr[index] ?? "") || "(nothing)"}`,
      ].join("\n"),
    );
  });
  return problems;
}

const clip = (text: string) => (text.length > 1500 ? `${text.slice(0, 1500)}… (${text.length} characters)` : text);

/** Runs a script in one bash; resolves with its output and exit code (killed after `timeoutMs`). */
export function runBash(
  script: string,
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ stdout: string; stderr: string; code: number | null }> {
  const child = spawn("bash", ["-c", script], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    timeout: options.timeoutMs,
    killSignal: "SIGKILL",
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ stdout, stderr, code }));
  });
}
