// lint-as: src/finance/merchants/planted.ts
// expect: architecture/layers
// A feature reaching up into the assembly.
export { createServices } from "../../app/services";
