import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

/**
 * The conventions of docs/architecture.md are lint rules (eslint.config.mjs, eslint/architecture.mjs).
 * Each file of test/lint-fixtures/ plants one violation: it names the file it pretends to be
 * (`// lint-as:`, which decides the rules and the layer its imports are judged from) and the rule it
 * breaks (`// expect:`). The linter must report exactly that, and nothing on the tree itself.
 */
const root = path.resolve(__dirname, "../..");
const fixtures = path.join(root, "test", "lint-fixtures");
const run = promisify(execFile);

type Planted = { file: string; lintAs: string; expected: string[] };

const planted: Planted[] = fs
  .readdirSync(fixtures)
  .filter((file) => file.endsWith(".ts"))
  .sort()
  .map((file) => {
    const text = fs.readFileSync(path.join(fixtures, file), "utf8");
    const lintAs = /^\/\/ lint-as: (\S+)$/m.exec(text)?.[1];
    if (!lintAs) throw new Error(`${file} names no lint-as path`);
    const expected = [...text.matchAll(/^\/\/ expect: (\S+)$/gm)].map((match) => match[1]);
    return { file, lintAs, expected };
  });

/** Lints every fixture as the file it pretends to be, in one ESLint process (the config is an ES module). */
async function lintPlanted(): Promise<Record<string, string[]>> {
  const script = `
    import fs from "node:fs";
    import path from "node:path";
    import { ESLint } from "eslint";
    const planted = JSON.parse(process.argv[1]);
    const eslint = new ESLint({ cwd: ${JSON.stringify(root)} });
    const found = {};
    for (const { file, lintAs } of planted) {
      const text = fs.readFileSync(path.join(${JSON.stringify(fixtures)}, file), "utf8");
      const [result] = await eslint.lintText(text, { filePath: path.join(${JSON.stringify(root)}, lintAs) });
      found[file] = result.messages.map((message) => message.ruleId ?? message.message);
    }
    console.log(JSON.stringify(found));
  `;
  const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(planted)], { cwd: root });
  return JSON.parse(stdout) as Record<string, string[]>;
}

describe("the conventions as lint rules", () => {
  let found: Record<string, string[]>;
  beforeAll(async () => {
    found = await lintPlanted();
  }, 60_000);

  test("every rule has a planted violation", () => {
    const rules = new Set(planted.flatMap((fixture) => fixture.expected));
    for (const rule of [
      "architecture/status-at-edge",
      "architecture/router-errors-through-edge",
      "architecture/origin-read",
      "architecture/bind-param",
      "architecture/layers",
      "architecture/feature-entry",
      "no-restricted-syntax",
    ])
      expect(rules).toContain(rule);
  });

  test.each(planted.map((fixture) => [fixture.file, fixture] as const))(
    "%s is reported, and only for what was planted",
    (_file, fixture) => {
      expect(found[fixture.file]).toEqual(fixture.expected);
    },
  );

  test("the tree itself breaks none of them", async () => {
    const { stdout } = await run(
      process.execPath,
      [path.join(root, "node_modules", "eslint", "bin", "eslint.js"), "--format", "json", "src", "rest-adapter", "workers"],
      { cwd: root, maxBuffer: 64 * 1024 * 1024 },
    ).catch((failure: { stdout: string }) => failure);
    const problems = (JSON.parse(stdout) as { filePath: string; messages: { ruleId: string; line: number }[] }[]).flatMap((result) =>
      result.messages.map((message) => `${path.relative(root, result.filePath)}:${message.line} ${message.ruleId}`),
    );
    expect(problems).toEqual([]);
  }, 120_000);
});
