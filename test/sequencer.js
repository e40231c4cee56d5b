// Longest test files first, so no worker idles at the end of the run behind one long file started last.
// Jest orders by the durations it cached on this machine; a fresh clone (CI) has no cache, and Jest
// falls back to file size, which put the slowest file (a short browser test) last. So a file Jest has no
// time for takes its time from test/durations.json, recorded by `FG_RECORD_DURATIONS=1 npm test`
// (test/summary-reporter.js); a file recorded nowhere yet counts as a typical integration file.
const path = require("node:path");
const Sequencer = require("@jest/test-sequencer").default;
const recorded = require("./durations.json");

const UNRECORDED_MS = 10_000;

class LongestFirstSequencer extends Sequencer {
  time(test) {
    return super.time(test) ?? recorded[path.relative(test.context.config.rootDir, test.path)] ?? UNRECORDED_MS;
  }
}

module.exports = LongestFirstSequencer;
