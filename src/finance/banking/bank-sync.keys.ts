/** Pure helpers of the bank sync: how a holding's security is keyed, and grouping rows by a key. */

/** The most specific identifier the provider gave, so the same security is found again on the next sync. */
export function securityKeyOf(holding: {
  figi: string | null;
  isin: string | null;
  cusip: string | null;
  ticker: string | null;
  name: string | null;
  currency: string;
}): string {
  if (holding.figi) return `figi:${holding.figi}`;
  if (holding.isin) return `isin:${holding.isin}`;
  if (holding.cusip) return `cusip:${holding.cusip}`;
  if (holding.ticker) return `ticker:${holding.ticker.toUpperCase()}:${holding.currency}`;
  return `name:${(holding.name ?? "unknown").toLowerCase()}:${holding.currency}`;
}

export function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}
