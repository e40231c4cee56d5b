/** What other features use of streaming: the one entry into it (docs/architecture.md, feature entry files). */
export type { ChainConsumerHandler, TurnOutcome } from "./chain-consumer.pump";
export { expandPatterns } from "./destination.handler";
export { PRODUCT, PRODUCT_VERSION, newWebhookSecret, webhookBody, webhookHeaders } from "./stream.formats";
export type { ConsumerRow, ConsumerSettlement } from "./stream.repository";
