// lint-as: src/finance/tags/planted-settings.ts
// expect: no-restricted-syntax
// A setting read outside src/platform/config/config.ts.
export const limit = Number(process.env.TAG_LIMIT ?? "10");
