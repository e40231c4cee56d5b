/** What other features use of retention: the one entry into it (docs/architecture.md, feature entry files). */
export { ArchiveWriter, manifestPathOf, writeManifest } from "./archive-writer";
export type { DataSummary } from "./archive-writer";
