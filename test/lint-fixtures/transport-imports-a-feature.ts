// lint-as: src/transports/graphql/planted.ts
// expect: architecture/layers
// A transport naming a feature (type imports count too).
export type { TagRow } from "../../finance/tags";
