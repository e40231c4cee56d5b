/**
 * Pages of the manual that error messages point at, as paths from the project folder (where operators
 * run the service). test/unit/docs.links.test.ts checks that each one, anchor included, exists.
 */
export const DOCS_PAGES = {
  settings: "docs/settings.md",
  database: "docs/operating.md#the-database",
  severalProcesses: "docs/operating.md#several-api-and-worker-processes",
  bankSandbox: "docs/bank-connections.md#try-it-without-a-bank",
  ssoWalkthrough: "docs/sso.md#sso-walk-through-local-idp",
  outbound: "docs/security.md#outbound-requests",
} as const;

/** The anchor of one setting's row in docs/settings.md. */
export const settingDoc = (name: string) => `${DOCS_PAGES.settings}#${name.toLowerCase()}`;
