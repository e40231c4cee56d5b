import fs from "node:fs";
import path from "node:path";
import { readFences } from "../helpers/readme-examples";

/**
 * Walk-throughs stay executable: every `curl` example of README.md and docs/*.md sits in a page (or a
 * section of it) that a test runs as printed. A new walk-through page needs its test, named here; a
 * test named here must read its page, so moving the text without the test fails.
 */
const ROOT = path.join(__dirname, "..", "..");

const RUN_BY: Array<{ page: string; section: string | null; test: string }> = [
  { page: "README.md", section: "The first administrator and a demo key", test: "test/e2e/docs.readme.walkthrough.test.ts" },
  { page: "README.md", section: "A five-minute tour", test: "test/e2e/docs.readme.walkthrough.test.ts" },
  { page: "docs/assistant.md", section: "Ask a question", test: "test/e2e/docs.readme.walkthrough.test.ts" },
  { page: "docs/rest-api.md", section: "API tour", test: "test/e2e/docs.rest-api.walkthrough.test.ts" },
  { page: "docs/rest-api.md", section: "REST conventions", test: "test/e2e/docs.rest-api.walkthrough.test.ts" },
  { page: "docs/bank-connections.md", section: null, test: "test/e2e/docs.bank-connections.walkthrough.test.ts" },
  {
    page: "docs/alerts.md",
    section: "Walk-through: the three presets, by e-mail to a local SMTP server",
    test: "test/e2e/docs.alerts.walkthrough.test.ts",
  },
  {
    page: "docs/audit-exports.md",
    section: "Walk-through: last month as CSV, a report as PDF",
    test: "test/e2e/audit-exports-walkthrough.test.ts",
  },
  {
    page: "docs/audit-retention.md",
    section: "Walk-through: archive a month, find an event, restore it, verify",
    test: "test/e2e/audit-retention.walkthrough.test.ts",
  },
  // Its browser steps are driven by the test, with the page's own request body (bash cannot sign in at an IdP).
  { page: "docs/sso.md", section: "SSO walk-through (local IdP)", test: "test/e2e/sso.walkthrough.test.ts" },
];

const PAGES = [
  "README.md",
  ...fs
    .readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

test("every curl example of README.md and docs/*.md is in a walk-through that a test runs", () => {
  const unrun = PAGES.flatMap((page) =>
    readFences(fs.readFileSync(path.join(ROOT, page), "utf8"))
      .filter((fence) => fence.lang === "sh" && fence.lines.some((line) => /\bcurl\b/.test(line)))
      .filter((fence) => !RUN_BY.some((entry) => entry.page === page && (entry.section === null || entry.section === fence.section)))
      .map((fence) => `${page}:${fence.line} (${fence.section})`),
  );
  expect(unrun).toEqual([]);
});

test("each walk-through's test exists and reads its page and section", () => {
  for (const entry of RUN_BY) {
    const source = fs.readFileSync(path.join(ROOT, entry.test), "utf8");
    const page = fs.readFileSync(path.join(ROOT, entry.page), "utf8");
    expect({ entry, readsPage: source.includes(`"${entry.page}"`) || source.includes(`"${path.basename(entry.page)}"`) }).toEqual({
      entry,
      readsPage: true,
    });
    if (entry.section === null) continue;
    expect({ entry, sectionExists: page.includes(`\n## ${entry.section}\n`) }).toEqual({ entry, sectionExists: true });
    // The test names the section (or a start of it) it runs.
    expect({ entry, namesSection: source.includes(entry.section.slice(0, 16)) }).toEqual({ entry, namesSection: true });
  }
});

test("the README stays short: under 200 lines, no line over 160 characters outside code blocks, one screenshot", () => {
  const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
  const lines = readme.split("\n");
  expect(lines.length).toBeLessThan(200);
  let inFence = false;
  const long = lines.flatMap((line, index) => {
    if (/^\s*```/.test(line)) inFence = !inFence;
    return !inFence && line.length > 160 ? [`README.md:${index + 1} (${line.length} characters)`] : [];
  });
  expect(long).toEqual([]);
  expect(readme.match(/!\[[^\]]*\]\(docs\/console\/[^)]+\.png\)/g)).toHaveLength(1);
  expect(readme).toContain("npm ci && npm start");
});

test("the manual's index links every page of docs/, and the README links the index", () => {
  const index = fs.readFileSync(path.join(ROOT, "docs", "README.md"), "utf8");
  const pages = fs.readdirSync(path.join(ROOT, "docs")).filter((name) => name.endsWith(".md") && name !== "README.md");
  expect(pages.filter((name) => !index.includes(`](${name})`))).toEqual([]);
  expect(fs.readFileSync(path.join(ROOT, "README.md"), "utf8")).toContain("](docs/README.md)");
});

test("every page of the manual starts by saying what the reader can do after it", () => {
  const generatedOrContributor = new Set([
    "README.md",
    "audit-events.md",
    "architecture.md",
    "retention.md",
    "rest-compat.md",
    "sure-api-coverage.md",
    "bank-providers.md",
  ]);
  const pages = fs.readdirSync(path.join(ROOT, "docs")).filter((name) => name.endsWith(".md") && !generatedOrContributor.has(name));
  const missing = pages.filter((name) => {
    const opening = fs
      .readFileSync(path.join(ROOT, "docs", name), "utf8")
      .split("\n\n")
      .slice(1, 2)
      .join("");
    return !/After reading this page you/.test(opening);
  });
  expect(missing).toEqual([]);
});
