/** What other features use of tags: the one entry into it (docs/architecture.md, feature entry files). */
// The GraphQL classes below carry decorators that need the metadata API: a caller outside the schema
// (a worker, a test importing a service) loads them through this file.
import "reflect-metadata";
export type { TagRepository, TagRow } from "./tag.repository";
export { TagType } from "./tag.type";
