import path from "node:path";
import { replaceGeneratedSection, type GeneratedSection } from "../../platform/common/generated-section";
import { projectRoot } from "../../platform/config/project-root";
import { commandUsage, COMMANDS, USAGE, type CommandSpec } from "./commands";

/** docs/cli.md: its command reference is the commands' own help (`npm run contracts`), so the page says what `--help` says. */
export const CLI_DOC = path.join(projectRoot, "docs", "cli.md");
const SECTION: GeneratedSection = {
  file: CLI_DOC,
  begin: "<!-- generated from src/app/cli/commands.ts by `npm run contracts`: do not edit by hand -->",
  end: "<!-- end of generated commands -->",
};

const fenced = (text: string) => ["```", text, "```"].join("\n");

export function renderCliReference(commands: CommandSpec[] = COMMANDS, overview: string = USAGE): string {
  const sections = commands.map((spec) => [`### \`${spec.name}\``, "", fenced(commandUsage(spec))].join("\n"));
  return [
    SECTION.begin,
    "",
    "`npx finance-gateway --help`:",
    "",
    fenced(overview),
    "",
    ...sections.flatMap((section) => [section, ""]),
    SECTION.end,
  ].join("\n");
}

/** The page with its generated part replaced by the commands' current help. */
export function renderCliDoc(current: string, commands: CommandSpec[] = COMMANDS, overview: string = USAGE): string {
  return replaceGeneratedSection(current, SECTION, renderCliReference(commands, overview));
}
