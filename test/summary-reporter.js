// Prints the slowest test files (the suite's cost is watched file by file: docs/testing.md states the
// budget), then one plain closing line ("N passed, N failed, N skipped") that CI tools read without
// knowing Jest's own summary format.
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
}
module.exports = SummaryReporter;
