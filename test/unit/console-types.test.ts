import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const root = path.join(__dirname, "..", "..");

/** The console's typed operations are generated from the committed schema; `npm run contracts` refreshes them. */
test("dashboard/src/gql/graphql.ts matches the schema and the console's operations", () => {
  const expected = execFileSync(process.execPath, [path.join(root, "dashboard", "codegen.mjs"), "--stdout"], { encoding: "utf8" });
  expect(expected).toContain("export const AuditEventsDocument");
  expect(fs.readFileSync(path.join(root, "dashboard", "src", "gql", "graphql.ts"), "utf8")).toBe(expected);
});
