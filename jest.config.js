// @swc/jest compiles TypeScript (legacy decorators + metadata for type-graphql); `tsc --noEmit` type-checks separately.
const swcTs = {
  jsc: {
    parser: { syntax: "typescript", decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true },
    target: "es2022",
    keepClassNames: true,
  },
  module: { type: "commonjs" },
  sourceMaps: "inline",
};

// Services the tests start on embedded PostgreSQL take any free port, so parallel files never race for
// the fixed default (test/e2e/self-host.stop-and-database.test.ts sets it explicitly).
process.env.EMBEDDED_POSTGRES_PORT ??= "0";

// One template database per run, shared by the parent (global setup) and its workers through the env.
process.env.FG_TEST_RUN ??= String(process.pid);

module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  // The fault suite (several processes per file, databases restarted) runs on its own: npm run test:faults.
  testPathIgnorePatterns: ["/node_modules/", "<rootDir>/test/faults/"],
  transform: {
    "^.+\\.ts$": ["@swc/jest", swcTs],
    // Jest on Node 20 cannot require() ES modules, so the ESM-only OIDC packages go through swc too.
    "^.+\\.m?js$": ["@swc/jest", { jsc: { target: "es2022" }, module: { type: "commonjs" } }],
  },
  // A dynamic import() of our own code names the built file (`import("./schema.js")`, as Node resolves it
  // at run time); here it is the TypeScript source.
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  // The same for otplib (TOTP) and the ESM-only @scure / @noble packages under it.
  transformIgnorePatterns: ["/node_modules/(?!(openid-client|oauth4webapi|jose|oidc-provider|otplib|@otplib|@scure|@noble)/)"],
  globalSetup: "<rootDir>/test/global-setup.ts",
  globalTeardown: "<rootDir>/test/global-teardown.ts",
  testTimeout: 30000,
  maxWorkers: 2,
  testSequencer: "<rootDir>/test/sequencer.js",
  reporters: ["default", "<rootDir>/test/summary-reporter.js"],
};
