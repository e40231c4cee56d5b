import fs from "node:fs";
import { createLogger } from "../../src/platform/common/logger";
import { LocalEventBus } from "../../src/platform/events/event-bus";
import { AUDIT_EVENTS_DOC, renderAuditEventsDoc } from "../../src/audit/log/audit-docs";
import { AUDIT_EVENT_TYPES } from "../../src/audit/log/audit.catalogue";
import { OPENAPI_FILE, renderContracts, SCHEMA_FILE } from "../../src/app/contracts";
import { createSchema } from "../../src/app/schema";
import { CLI_DOC, renderCliDoc } from "../../src/app/cli/cli-doc";
import { renderSettingsDoc, SETTINGS_DOC } from "../../src/platform/config/settings-doc";
import { settings } from "../../src/platform/config/settings";

/** The committed contracts must be what the code generates; regenerate with `npm run contracts`. */
describe("generated contracts", () => {
  let rendered: { graphql: string; openapi: string };
  beforeAll(async () => {
    rendered = renderContracts(await createSchema(new LocalEventBus(createLogger("silent"))));
  });

  test("schema/schema.graphql is up to date", () => {
    expect(fs.readFileSync(SCHEMA_FILE, "utf8")).toBe(rendered.graphql);
  });

  test("schema/openapi.yaml is up to date", () => {
    expect(fs.readFileSync(OPENAPI_FILE, "utf8")).toBe(rendered.openapi);
  });

  test("docs/audit-events.md lists every type of the audit catalogue", () => {
    const doc = fs.readFileSync(AUDIT_EVENTS_DOC, "utf8");
    expect(doc).toBe(renderAuditEventsDoc(doc));
    for (const type of AUDIT_EVENT_TYPES) expect(doc).toContain(`| \`${type}\` |`);
  });

  test("docs/settings.md lists every setting as the schema parses it", () => {
    const doc = fs.readFileSync(SETTINGS_DOC, "utf8");
    expect(doc).toBe(renderSettingsDoc(doc, settings));
  });

  test("docs/cli.md shows every command's own --help", () => {
    const doc = fs.readFileSync(CLI_DOC, "utf8");
    expect(doc).toBe(renderCliDoc(doc));
  });

  test("every REST route is documented with its success and error responses", () => {
    const yaml = rendered.openapi;
    for (const path of ["/transactions:", "/transactions/{id}:", "/merchants:", "/merchants/{id}:"])
      expect(yaml).toContain(`\n  ${path}\n`);
    for (const operationId of [
      "listTransactions",
      "createTransaction",
      "getTransaction",
      "updateTransaction",
      "deleteTransaction",
      "listMerchants",
      "createMerchant",
    ]) {
      expect(yaml).toContain(`operationId: ${operationId}`);
    }
  });
});
