// lint-as: src/platform/metrics/planted.ts
// expect: architecture/layers
// The platform reaching up into a transport.
export { sendError } from "../../transports/http/respond";
