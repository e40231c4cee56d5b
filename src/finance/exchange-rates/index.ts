/** What other features use of exchange rates: the one entry into it (docs/architecture.md, feature entry files). */
import "reflect-metadata";
export { convertSeries, convertTotals, rateBook, rateOn } from "./conversion";
export type { ConvertedPoint, ConvertedTotals, CurrencyPoint, Holding, RateBook, RateInForce } from "./conversion";
export type { ExchangeRateService } from "./exchange-rate.service";
export { CurrencyConversionType } from "./exchange-rate.type";
