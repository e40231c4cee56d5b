// lint-as: src/platform/events/topics.ts
// expect: architecture/layers
// The event catalogue (src/platform/events/) naming a feature's type.
export type { TagRow } from "../../finance/tags/tag.repository";
