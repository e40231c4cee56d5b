// Prints the slowest test files (the suite's cost is watched file by file: docs/testing.md states the
// budget), then one plain closing line ("N passed, N failed, N skipped") that CI tools read without
// knowing Jest's own summary format. With FG_RECORD_DURATIONS=1 it also records each file's time in
// test/durations.json, which orders a fresh clone's run longest first (test/sequencer.js).
const fs = require("node:fs");
const path = require("node:path");

const SLOWEST = 15;

class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, numRuntimeErrorTestSuites } = results;
    const files = results.testResults
      .map((file) => ({ file: path.relative(this.rootDir, file.testFilePath), ms: file.perfStats.end - file.perfStats.start }))
      .filter((file) => file.ms > 0)
      .sort((a, b) => b.ms - a.ms);
    if (process.env.FG_RECORD_DURATIONS === "1") this.recordDurations(files);
    if (files.length > 0) {
      const shown = files.slice(0, SLOWEST);
      const total = files.reduce((sum, file) => sum + file.ms, 0);
      const lines = shown.map((file) => `${(file.ms / 1000).toFixed(1).padStart(7)} s  ${file.file}`);
      process.stdout.write(
        `\nSlowest ${shown.length} of ${files.length} test files (${(total / 1000).toFixed(0)} s of file time in all):\n${lines.join("\n")}\n`,
      );
    }
    const failed = numFailedTests + numRuntimeErrorTestSuites;
    process.stdout.write(`\n${numPassedTests} passed, ${failed} failed, ${numPendingTests + numTodoTests} skipped\n`);
  }

  /** Merges this run's file times (ms, to a tenth of a second) into test/durations.json, sorted by path. */
  recordDurations(files) {
    const target = path.join(this.rootDir, "test", "durations.json");
    const durations = JSON.parse(fs.readFileSync(target, "utf8"));
    for (const file of files) durations[file.file] = Math.round(file.ms / 100) * 100;
    for (const file of Object.keys(durations)) if (!fs.existsSync(path.join(this.rootDir, file))) delete durations[file];
    const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
    fs.writeFileSync(target, `${JSON.stringify(sorted, null, 2)}\n`);
  }
}
module.exports = SummaryReporter;
