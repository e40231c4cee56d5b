/** What other features use of merchants: the one entry into it (docs/architecture.md, feature entry files). */
export type { MerchantRepository, MerchantRow } from "./merchant.repository";
export { MerchantType } from "./merchant.type";
