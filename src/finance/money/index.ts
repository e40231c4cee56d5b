/** What other features use of money: the one entry into it (docs/architecture.md, feature entry files). */
export { absolute, formatMoney, isKnownCurrency, negate, parseAmount, toAmountString, toMinorUnits, toSignedMinorUnits } from "./money";
export { CalendarDateScalar, DecimalScalar } from "./money.scalars";
