import path from "node:path";
import { z } from "zod";
import { replaceGeneratedSection, type GeneratedSection } from "../common/generated-section";
import { projectRoot } from "./project-root";

/**
 * What a setting means, kept beside its parser (settings.ts) so the reference page cannot drift from
 * the code: docs/settings.md's tables are generated from the schema and this metadata.
 */
export const SETTING_GROUPS = [
  "Server",
  "Database",
  "Queues",
  "Logs and metrics",
  "GraphQL",
  "Assistant",
  "Secrets",
  "Bank connections",
  "Sign-in",
  "Audit log",
  "Audit exports and reports",
  "Audit streaming",
  "Audit retention",
  "Alerts",
  "Single sign-on",
  "Outbound requests",
  "Imports",
] as const;

export type SettingDoc = {
  group: (typeof SETTING_GROUPS)[number];
  meaning: string;
  /** What the table shows as the default when the schema's own default would mislead (a computed or machine-specific value). */
  default?: string;
  /** What the table shows as the accepted values when the schema cannot say it (a transform, a pattern). */
  range?: string;
};

export const SETTING_DOCS = z.registry<SettingDoc>();

/** Registers what a setting means and returns its schema unchanged. */
export function setting<T extends z.ZodType>(
  schema: T,
  group: SettingDoc["group"],
  meaning: string,
  shown: Pick<SettingDoc, "default" | "range"> = {},
): T {
  SETTING_DOCS.add(schema, { group, meaning, ...shown });
  return schema;
}

export const SETTINGS_DOC = path.join(projectRoot, "docs", "settings.md");
const SECTION: GeneratedSection = {
  file: SETTINGS_DOC,
  begin: "<!-- generated from src/platform/config/settings.ts by `npm run contracts`: do not edit by hand -->",
  end: "<!-- end of generated settings -->",
};

type JsonSchema = { type?: string; minimum?: number; maximum?: number; enum?: unknown[]; format?: string };

const BOOLEAN_WORDS = ["true", "false", "1", "0", "yes", "no"];
const code = (value: unknown) => `\`${String(value)}\``;

function defaultOf(name: string, field: z.ZodType, doc: SettingDoc): string {
  if (doc.default !== undefined) return doc.default;
  // The schema's own default (after parsing: `true` for a flag given as "yes"), read from the schema rather than
  // its JSON form, which leaves out the defaults of transformed values.
  const def = field._zod.def as { type: string; defaultValue?: unknown };
  if (def.type !== "default") return "unset";
  const value = def.defaultValue;
  if (value === "") return "empty";
  if (typeof value === "object") throw new Error(`setting ${name}: give its default as it is written (setting(…, { default }))`);
  return code(value);
}

function rangeOf(doc: SettingDoc, json: JsonSchema): string {
  if (doc.range !== undefined) return doc.range;
  if (json.enum) {
    const values = json.enum.map(String);
    if (values.length === BOOLEAN_WORDS.length && values.every((value) => BOOLEAN_WORDS.includes(value)))
      return "`true` or `false` (also `1`/`0`, `yes`/`no`)";
    return values.map(code).join(", ");
  }
  if (json.type === "integer" || json.type === "number") {
    // An integer without a maximum reports the largest safe integer; that is no bound a reader needs.
    const max = json.maximum !== undefined && json.maximum < Number.MAX_SAFE_INTEGER ? json.maximum : undefined;
    if (json.minimum !== undefined && max !== undefined) return `${json.minimum}–${max}`;
    if (json.minimum !== undefined) return `at least ${json.minimum}`;
    return max !== undefined ? `at most ${max}` : "a number";
  }
  return json.format === "uri" ? "a URL" : "text";
}

/** The generated part of docs/settings.md: one table per group, every setting of the schema in it. */
export function renderSettingsTables(schema: z.ZodObject): string {
  const json = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as { properties: Record<string, JsonSchema> };
  const rows = new Map<SettingDoc["group"], string[]>();
  for (const [name, field] of Object.entries(schema.shape)) {
    // Settings are upper case; lower-case keys are variables npm sets for its scripts, read but not configured.
    if (!/^[A-Z][A-Z0-9_]*$/.test(name)) continue;
    const doc = SETTING_DOCS.get(field as z.ZodType);
    if (!doc) throw new Error(`setting ${name} has no documentation: wrap its schema in setting(…) in src/platform/config/settings.ts`);
    const cells = [
      `<a id="${name.toLowerCase()}"></a>${code(name)}`,
      defaultOf(name, field as z.ZodType, doc),
      rangeOf(doc, json.properties[name]),
    ];
    rows.set(doc.group, [
      ...(rows.get(doc.group) ?? []),
      `| ${[...cells, doc.meaning].map((cell) => cell.replace(/\|/g, "\\|")).join(" | ")} |`,
    ]);
  }
  const sections = SETTING_GROUPS.filter((group) => rows.has(group)).map((group) =>
    [`## ${group}`, "", "| Setting | Default | Accepted values | Meaning |", "| --- | --- | --- | --- |", ...rows.get(group)!].join("\n"),
  );
  return [SECTION.begin, "", ...sections.flatMap((section) => [section, ""]), SECTION.end].join("\n");
}

/** The page with its generated part replaced by the schema's current tables. */
export function renderSettingsDoc(current: string, schema: z.ZodObject): string {
  return replaceGeneratedSection(current, SECTION, renderSettingsTables(schema));
}
