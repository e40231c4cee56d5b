import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { anchorsOf, brokenLinks, linksOf } from "../helpers/markdown-links";

/** The README and the manual under docs/ link to each other by relative paths and anchors; every one must land. */
const ROOT = path.join(__dirname, "..", "..");
const PAGES = [
  "README.md",
  "CONTRIBUTING.md",
  ...fs
    .readdirSync(path.join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

test("every relative link and anchor of README.md, CONTRIBUTING.md and docs/*.md resolves", () => {
  expect(brokenLinks(ROOT, PAGES)).toEqual([]);
});

test("the checker finds a missing page, a missing anchor and a root-relative link, and ignores links in code", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fg-links-"));
  try {
    fs.writeFileSync(
      path.join(dir, "a.md"),
      [
        "# Page A",
        "## The `db url` command",
        '<a id="custom"></a>',
        "[ok](#page-a) [ok](#the-db-url-command) [ok](#custom) [ok](b.md#section-b) [external](https://example.com/x#y)",
        "[gone](missing.md) [no anchor](b.md#nowhere) [rooted](/docs/b.md)",
        "`[in code](missing.md)`",
        "```",
        "[in a fence](missing.md)",
        "```",
      ].join("\n"),
    );
    fs.writeFileSync(path.join(dir, "b.md"), "# B\n## Section B\n");
    expect(brokenLinks(dir, ["a.md"])).toEqual([
      "a.md:5: missing.md: no such file",
      'a.md:5: b.md#nowhere: no heading or anchor "nowhere" in b.md',
      "a.md:5: /docs/b.md: a root-relative link resolves differently on each Git host; link relative to the page",
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("anchors follow the Git host's rule for headings, repeats numbered", () => {
  expect([
    ...anchorsOf("# Single sign-on (OpenID Connect)\n## Walk-through: last month as CSV, a report as PDF\n## Logs\n## Logs\n"),
  ]).toEqual(["single-sign-on-openid-connect", "walk-through-last-month-as-csv-a-report-as-pdf", "logs", "logs-1"]);
  expect(linksOf("x.md", "![shot](console/users.png) and [a](b.md)").map((link) => link.target)).toEqual(["console/users.png", "b.md"]);
});
