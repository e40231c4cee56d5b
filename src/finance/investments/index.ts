/** What other features use of investments: the one entry into it (docs/architecture.md, feature entry files). */
import "reflect-metadata";
export { InvestmentRepository } from "./investment.repository";
export { TradeService } from "./trade.service";
export { PRICES_PER_CALL_MAX, SecurityPriceService, type PriceEntry } from "./security-price.service";
export { computePositions } from "./holdings.calculator";
export { HOLDING_DAY_OF_ID, HOLDING_DAYS, holdingLines, positionsOn } from "./positions.sql";
export { dayNumber, dayText, holdingWindow, pageHoldingDays, type HoldingLine, type HoldingSlot, type ReportedBlock } from "./holding-days";
export { SecurityType } from "./investment.type";
export type { HeldRow, TradeTotalsRow } from "./investment.repository";
