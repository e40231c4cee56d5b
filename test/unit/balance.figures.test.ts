import Decimal from "decimal.js";
import fc from "fast-check";
import { BALANCE_FIGURES, balanceFigures, balanceTypeOf, flowsFactorOf } from "../../src/finance/ledger/balance.figures";
import type { BalanceRow } from "../../src/finance/ledger/ledger.repository";
import { sumAmounts, toAmountString } from "../../src/finance/money/money";

/** The figures as decimal.js computes them, written apart from the code under test: the oracle. */
function figuresByDecimal(row: BalanceRow): Record<string, string> {
  const type = balanceTypeOf(row.accountType);
  const cash = type !== "non_cash";
  const loan = row.accountType === "loan";
  const zero = new Decimal(0);
  const start = new Decimal(row.startBalance);
  const end = new Decimal(row.endBalance);
  const startCash = cash ? new Decimal(row.startCashBalance) : zero;
  const endCash = cash ? new Decimal(row.endCashBalance) : zero;
  const net = new Decimal(row.inflows).minus(row.outflows).times(flowsFactorOf(row.classification));
  const figures: Record<string, Decimal> = {
    balance: end,
    cashBalance: endCash,
    startCashBalance: startCash,
    startNonCashBalance: start.minus(startCash),
    startBalance: start,
    cashInflows: cash ? new Decimal(row.inflows) : zero,
    cashOutflows: cash ? new Decimal(row.outflows) : zero,
    nonCashInflows: loan ? new Decimal(row.inflows) : zero,
    nonCashOutflows: loan ? new Decimal(row.outflows) : zero,
    netMarketFlows: type === "investment" ? new Decimal(row.endHoldingsValue).minus(row.startHoldingsValue) : zero,
    cashAdjustments: cash ? endCash.minus(startCash).minus(net) : zero,
    nonCashAdjustments: cash
      ? zero
      : end
          .minus(endCash)
          .minus(start.minus(startCash))
          .minus(loan ? net : zero),
    endCashBalance: endCash,
    endNonCashBalance: end.minus(endCash),
    endBalance: end,
  };
  return Object.fromEntries(Object.entries(figures).map(([name, value]) => [name, toAmountString(value)]));
}

/**
 * Amounts as PostgreSQL writes numeric(19,4) and the derivation's sums of them: plain, 0–4 places, zeros
 * kept; up to 10^13 in size (amounts are at most 10^12: MAX_ABS_AMOUNT), so that the oracle's sums stay
 * within decimal.js's 20 significant digits.
 */
const amount = fc
  .tuple(fc.bigInt({ min: -(10n ** 17n), max: 10n ** 17n }), fc.integer({ min: 0, max: 4 }))
  .filter(([units, places]) => (units < 0n ? -units : units) < 10n ** BigInt(13 + places))
  .map(([units, places]) => {
    const digits = (units < 0n ? -units : units).toString().padStart(places + 1, "0");
    const text = places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
    return units < 0n ? `-${text}` : text;
  });

describe("balance figures", () => {
  test("sumAmounts adds exactly and writes as decimal.js does, in any form", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.oneof(amount, fc.constantFrom("1e3", "-2.5e-3", "0", "0.0000")), fc.constantFrom(1, -1, 0)), {
          minLength: 1,
          maxLength: 5,
        }),
        (terms) => {
          const expected = toAmountString(terms.reduce((sum, [value, sign]) => sum.plus(new Decimal(value).times(sign)), new Decimal(0)));
          expect(sumAmounts(terms)).toBe(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  test("every figure of every kind of account equals decimal.js's", () => {
    const row = fc.record({
      accountType: fc.constantFrom("depository", "credit_card", "investment", "crypto", "loan", "property", "vehicle", "other_asset"),
      classification: fc.constantFrom("asset", "liability"),
      startBalance: amount,
      endBalance: amount,
      startCashBalance: amount,
      endCashBalance: amount,
      startHoldingsValue: amount,
      endHoldingsValue: amount,
      inflows: amount,
      outflows: amount,
    });
    fc.assert(
      fc.property(row, (fields) => {
        const balance = fields as unknown as BalanceRow;
        const figures = balanceFigures(balance);
        expect(Object.keys(figures).sort()).toEqual([...BALANCE_FIGURES].sort());
        expect(figures).toEqual(figuresByDecimal(balance));
      }),
      { numRuns: 500 },
    );
  });
});
