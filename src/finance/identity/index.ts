/** What other features use of identity: the one entry into it (docs/architecture.md, feature entry files). */
export type { ApiKeyService, ApiKeySummary } from "./api-key.service";
export type { UserRepository } from "./user.repository";
export type { UserService } from "./user.service";
