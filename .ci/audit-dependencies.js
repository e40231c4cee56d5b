#!/usr/bin/env node
// Fails on known high or critical vulnerabilities in production dependencies (`npm audit --omit=dev`).
// A registry that offers no audit service cannot say either way: that is reported loudly, and the
// step passes, since no change of ours could make it answer.
"use strict";
const { spawnSync } = require("node:child_process");

const run = spawnSync("npm", ["audit", "--omit=dev", "--json"], { encoding: "utf8", timeout: 120_000 });
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  report = null;
}
const counts = report && report.metadata && report.metadata.vulnerabilities;
if (!counts) {
  const why = (report && report.message) || (run.error && run.error.message) || run.stderr.trim().split("\n").pop();
  console.log(`dependency audit UNAVAILABLE (the registry did not answer the audit request: ${why})`);
  process.exit(0);
}
const serious = Object.entries(report.vulnerabilities || {}).filter(([, v]) => v.severity === "high" || v.severity === "critical");
console.log(`dependency audit: ${JSON.stringify(counts)}`);
if (serious.length > 0) {
  for (const [name, v] of serious)
    console.log(
      `  ${v.severity}: ${name} ${v.range} (${[]
        .concat(v.via)
        .map((x) => (typeof x === "string" ? x : x.title))
        .join("; ")})`,
    );
  console.log(`${serious.length} production dependencies have high or critical vulnerabilities: npm audit fix, or pin a fixed version`);
  process.exit(1);
}
