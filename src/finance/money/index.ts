/** What other features use of money: the one entry into it (docs/architecture.md, feature entry files). */
export {
  absolute,
  formatMoney,
  isKnownCurrency,
  minorUnitDigits,
  negate,
  parseAmount,
  railsDecimal,
  sumAmounts,
  toAmountString,
  toMinorUnits,
  toSignedMinorUnits,
} from "./money";
export { CalendarDateScalar, DecimalScalar } from "./money.scalars";
