/** What other features use of investments: the one entry into it (docs/architecture.md, feature entry files). */
import "reflect-metadata";
export { InvestmentRepository } from "./investment.repository";
export { TradeService } from "./trade.service";
export { PRICES_PER_CALL_MAX, SecurityPriceService, type PriceEntry } from "./security-price.service";
export { computePositions } from "./holdings.calculator";
export { POSITION_BY_ID, positionsOn } from "./positions.sql";
export { SecurityType } from "./investment.type";
export type { HeldRow, TradeTotalsRow } from "./investment.repository";
