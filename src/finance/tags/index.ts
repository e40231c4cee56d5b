/** What other features use of tags: the one entry into it (docs/architecture.md, feature entry files). */
export type { TagRepository, TagRow } from "./tag.repository";
export { TagType } from "./tag.type";
