/** What other features use of merchants: the one entry into it (docs/architecture.md, feature entry files). */
// The GraphQL classes below carry decorators that need the metadata API: a caller outside the schema
// (a worker, a test importing a service) loads them through this file.
import "reflect-metadata";
export type { MerchantRepository, MerchantRow } from "./merchant.repository";
export { MerchantType } from "./merchant.type";
export { MERCHANT_NAME_MAX } from "./merchant.service";
