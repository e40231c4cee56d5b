/** What other features use of delivery: the one entry into it (docs/architecture.md, feature entry files). */
export type { ChainConsumerHandler, TurnOutcome } from "./chain-consumer.handler";
export type { ConsumerRepository, ConsumerRow, ConsumerSettlement } from "./consumer.repository";
export { PRODUCT, PRODUCT_VERSION, newWebhookSecret, webhookBody, webhookHeaders } from "./webhook-signing";
