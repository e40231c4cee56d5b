import js from "@eslint/js";
import prettier from "eslint-config-prettier";
import tseslint from "typescript-eslint";
import architecture from "./eslint/architecture.mjs";

/** Settings are read in one place: src/platform/config/config.ts. */
const CONFIG_ONLY = {
  selector: "MemberExpression[object.name='process'][property.name='env']",
  message: "Read settings through src/platform/config/config.ts; it is the only reader of process.env.",
};

/**
 * Data access lives in repositories (`*.repository.ts`): they alone run SQL and touch Sequelize models
 * (docs/architecture.md). Everything else may import a model file's types and plain helpers, never the
 * model classes, and never runs a statement itself.
 */
const REPOSITORIES_ONLY = [
  {
    selector:
      "ImportDeclaration[importKind!='type'][source.value=/\\.model$/] > ImportSpecifier[importKind!='type'][imported.name=/Model$/]",
    message: "Only repositories touch Sequelize models: call a method of the feature's *.repository.ts instead.",
  },
  {
    selector:
      "ImportDeclaration[source.value=/(^|\\/)common\\/sql$/] > ImportSpecifier[importKind!='type'][imported.name=/^(selectRows|readRows|readRowsWithin|copyOut)$/]",
    message: "Only repositories run SQL: move the statement into the feature's *.repository.ts.",
  },
  {
    selector: "ImportDeclaration[importKind!='type'][source.value='pg']",
    message: "Only repositories (and src/platform/db, src/platform/events transports) talk to PostgreSQL directly.",
  },
  {
    selector:
      "ImportDeclaration[source.value='sequelize'] > ImportSpecifier[importKind!='type'][imported.name=/^(QueryTypes|Op|literal|fn|col|where)$/]",
    message: "Only repositories build queries: move it into the feature's *.repository.ts.",
  },
  {
    selector:
      "CallExpression[callee.property.name=/^(query|literal|fn|col|where|getQueryInterface)$/][callee.object.property.name=/^(sequelize|connection)$/]",
    message: "Only repositories run SQL: move the statement into the feature's *.repository.ts.",
  },
  {
    selector: "CallExpression[callee.property.name=/^(query|literal|fn|col|where|getQueryInterface)$/][callee.object.name='sequelize']",
    message: "Only repositories run SQL: move the statement into the feature's *.repository.ts.",
  },
];

export default tseslint.config(
  // test/lint-fixtures/ holds planted violations; test/unit/lint.rules.test.ts lints each as the file it pretends to be.
  { ignores: ["dist/", "node_modules/", ".data/", "coverage/", "dashboard/src/gql/", "test/lint-fixtures/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "no-restricted-syntax": ["error", CONFIG_ONLY, ...REPOSITORIES_ONLY],
    },
  },
  {
    // Where SQL and models belong: repositories, the models themselves, the database plumbing
    // (connection, migrations, the shared SQL helpers) and the LISTEN/NOTIFY transport of the event bus.
    files: [
      "**/*.repository.ts",
      "**/*.model.ts",
      "src/platform/db/**",
      "src/app/models.ts",
      "src/platform/common/sql.ts",
      "src/platform/events/event-bus.ts",
    ],
    rules: { "no-restricted-syntax": ["error", CONFIG_ONLY] },
  },
  {
    files: ["src/platform/config/config.ts"],
    rules: { "no-restricted-syntax": ["error", ...REPOSITORIES_ONLY] },
  },
  {
    files: ["test/**", "bench/**", "jest.config.js", "**/*.js", "**/*.mjs"],
    rules: { "no-restricted-syntax": "off" },
  },
  // The conventions of docs/architecture.md that depend on where a file lives (eslint/architecture.mjs).
  {
    files: ["src/**/*.ts", "rest-adapter/**/*.ts", "workers/**/*.ts"],
    plugins: { architecture },
    rules: {
      // (f) and (d): platform ← transports ← features ← app; the event catalogue imports no feature.
      "architecture/layers": "error",
      // (e): a feature reaches another only through its index.ts.
      "architecture/feature-entry": "error",
      // (b): the request origin is read by AuditService alone.
      "architecture/origin-read": "error",
      // (c): bind parameters only through bindParam.
      "architecture/bind-param": "error",
    },
  },
  {
    // (a): statuses are chosen at the transport edge (src/transports/, rest-adapter/) and in the error
    // edges; a feature's router is its HTTP edge for success answers only.
    files: ["src/**/*.ts", "workers/**/*.ts"],
    ignores: ["src/transports/**", "src/platform/common/error-edges.ts", "**/*.router.ts"],
    rules: { "architecture/status-at-edge": "error" },
  },
  {
    files: ["**/*.router.ts"],
    ignores: ["src/transports/**", "rest-adapter/**"],
    rules: { "architecture/router-errors-through-edge": "error" },
  },
  {
    files: ["src/audit/log/audit.service.ts", "src/platform/common/audit-context.ts"],
    rules: { "architecture/origin-read": "off" },
  },
  {
    files: ["src/platform/common/sql.ts"],
    rules: { "architecture/bind-param": "off" },
  },
  // Known exceptions, each to be removed by the change named: a rule's list of what it does not hold yet.
  {
    // The composition root's `Services` (src/app/services.ts) is still handed to routers, the GraphQL
    // request context and the per-request loaders as a whole: until each gets the services it uses
    // injected, these files name the app layer from below it.
    files: [
      "src/transports/graphql/context.ts",
      "src/transports/http/graphql-socket.ts",
      "src/finance/auth/auth.router.ts",
      "src/finance/banking/banking.loaders.ts",
      "src/finance/transactions/transaction-relations.read-ahead.ts",
      "src/audit/alerts/alert.resolver.ts",
      "src/audit/exports/export.router.ts",
      "src/audit/sso/sso.router.ts",
    ],
    rules: { "architecture/layers": "off" },
  },
  {
    files: ["**/*.js"],
    languageOptions: {
      sourceType: "commonjs",
      globals: { require: "readonly", module: "writable", process: "readonly", console: "readonly", __dirname: "readonly" },
    },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
