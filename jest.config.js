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

module.exports = {
  testEnvironment: "node",
  roots: ["<rootDir>/test"],
  testMatch: ["**/*.test.ts"],
  transform: { "^.+\\.ts$": ["@swc/jest", swcTs] },
  globalSetup: "<rootDir>/test/global-setup.js",
  globalTeardown: "<rootDir>/test/global-teardown.js",
  testTimeout: 30000,
  maxWorkers: 2,
};
