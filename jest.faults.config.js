// The fault suite (`npm run test:faults`): the deployed topology and its failure drills. Each file starts
// its own PostgreSQL and Redis (test/helpers/own-servers.ts), so no template database is set up, and the
// files run one at a time: each one already runs several service processes on the machine's cores.
const base = require("./jest.config");

module.exports = {
  ...base,
  roots: ["<rootDir>/test/faults"],
  testPathIgnorePatterns: ["/node_modules/"],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 120000,
};
