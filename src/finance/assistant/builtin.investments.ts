import Decimal from "decimal.js";
import { formatMoney } from "../money";
import { currencyNotes, type CurrencyNotes } from "./builtin.answers";
import { describe } from "./builtin.periods";
import type { FamilyContext } from "./provider";
import type { ToolRunner } from "./tools";
import { type Asked, refused } from "./builtin.wording";

/**
 * The built-in assistant's answers about investments: what the portfolio is worth, the unrealised gain
 * on a security or on all of them (get_holdings), and what was invested in a period (summarize_trades).
 * A security the family neither holds nor trades gets no figure, only the ones it has.
 */
type HoldingEntry = {
  account: string;
  ticker: string;
  quantity: string;
  price: string | null;
  value: string;
  currency: string;
  cost_basis: string | null;
  average_cost: string | null;
  unrealized_gain: string | null;
  unrealized_gain_percent: string | null;
};
type AccountEntry = { name: string; currency: string; balance: string | null; cash: string | null; holdings_value: string | null };
type GainTotals = { quantity: string; value: string; cost_basis: string; unrealized_gain: string; unrealized_gain_percent: string | null };
type TradeEntry = {
  ticker: string;
  currency: string;
  buys: number;
  bought_quantity: string;
  bought_amount: string;
  sells: number;
  sold_quantity: string;
  sold_amount: string;
  net_invested: string;
};
type TradeTotals = { bought_amount: string; sold_amount: string; net_invested: string };

/** The day a portfolio question is about: the period's last day, never after today. */
function dayOf(asked: Asked, today: string): string {
  return asked.period && asked.period.end < today ? asked.period.end : today;
}

const onDay = (date: string, today: string) => (date === today ? `today (${today})` : `at the end of ${date}`);
const shares = (quantity: string) => `${quantity} share${quantity === "1" ? "" : "s"}`;
const listed = (names: string[]) => (names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}` : names[0]);
/** Tickers as they are written (the question was read in lower case); the tools match them case-insensitively. */
const tickerArgs = (asked: Asked) => (asked.tickers.length ? { tickers: asked.tickers.map((ticker) => ticker.toUpperCase()) } : {});

/** The refusal of a security the family does not have, worded honestly; any other refusal as the tools' is. */
function notHeld(result: Record<string, unknown>): string | null {
  const unknown = result.unknown_securities as string[] | undefined;
  if (!unknown) return refused(result);
  const known = result.known_securities as string[];
  const asked = unknown.map((ticker) => `"${ticker.toUpperCase()}"`).join(" or ");
  return (
    `I couldn't find ${asked} among the securities your accounts hold or trade` +
    (known.length ? ` (${listed(known)})` : " (you have none yet)") +
    ", so I can't give you a figure for it."
  );
}

function holdingLine(row: HoldingEntry): string {
  const price = row.price === null ? "" : ` at ${formatMoney(row.price, row.currency)}`;
  const gain =
    row.cost_basis === null || row.unrealized_gain === null
      ? ""
      : ` (cost basis ${formatMoney(row.cost_basis, row.currency)}, ${gainWords(row.unrealized_gain, row.currency)})`;
  return `- ${row.ticker} (${row.account}): ${shares(row.quantity)}${price}, **${formatMoney(row.value, row.currency)}**${gain}`;
}

function gainWords(amount: string, currency: string): string {
  const value = new Decimal(amount);
  return `unrealised ${value.isNegative() ? "loss" : "gain"} ${formatMoney(value.abs().toFixed(), currency)}`;
}

export async function portfolio(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  const date = dayOf(asked, context.today);
  const result = await tools.call("get_holdings", { date, ...tickerArgs(asked) });
  const problem = notHeld(result);
  if (problem) return problem;
  const accounts = result.investment_accounts as AccountEntry[];
  const holdings = result.holdings as HoldingEntry[];
  const when = onDay(date, context.today);
  if (asked.tickers.length) {
    const names = listed(result.securities as string[]);
    if (holdings.length === 0) return `You hold no ${names} ${when}.`;
    const byCurrency = new Map<string, Decimal>();
    for (const row of holdings) byCurrency.set(row.currency, (byCurrency.get(row.currency) ?? new Decimal(0)).plus(row.value));
    const worth = [...byCurrency].map(([currency, sum]) => `**${formatMoney(sum.toFixed(), currency)}**`).join(" and ");
    return [
      `Your ${names} ${holdings.length === 1 ? "holding is" : "holdings are"} worth ${worth} ${when}:`,
      "",
      ...holdings.map(holdingLine),
    ].join("\n");
  }
  if (accounts.length === 0) return "You have no investment accounts, so there is no portfolio to value.";
  const money = (value: unknown) => formatMoney(String(value), context.currency);
  const figures = result.portfolio as { value: string; holdings_value: string; cash: string };
  const lines = [
    `Your portfolio is worth **${money(figures.value)}** ${when}: holdings of ${money(figures.holdings_value)} and cash of ` +
      `${money(figures.cash)}, in ${accounts.length === 1 ? "1 investment account" : `${accounts.length} investment accounts`}.` +
      currencyNotes(context.currency, result as CurrencyNotes),
  ];
  if (accounts.length > 1) {
    lines.push("", "By account:");
    for (const account of accounts)
      lines.push(
        account.balance === null
          ? `- ${account.name}: no history yet`
          : `- ${account.name}: ${formatMoney(account.balance, account.currency)} (holdings ${formatMoney(account.holdings_value ?? "0", account.currency)}, cash ${formatMoney(account.cash ?? "0", account.currency)})`,
      );
  }
  if (holdings.length) lines.push("", "Holdings:", ...holdings.map(holdingLine));
  return lines.join("\n");
}

export async function gain(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  const date = dayOf(asked, context.today);
  const result = await tools.call("get_holdings", { date, ...tickerArgs(asked) });
  const problem = notHeld(result);
  if (problem) return problem;
  const holdings = result.holdings as HoldingEntry[];
  const when = onDay(date, context.today);
  const what = asked.tickers.length ? listed(result.securities as string[]) : "your holdings";
  if (holdings.length === 0)
    return `You hold no ${asked.tickers.length ? what : "securities"} ${when}, so there is no unrealised gain or loss.`;
  const totals = Object.entries(result.gain_by_currency as Record<string, GainTotals>);
  const missing = Number(result.holdings_without_cost_basis);
  if (totals.length === 0) return `I can't work out a gain on ${what}: ${missing === 1 ? "it has" : "they have"} no cost basis.`;
  const single = holdings.length === 1 ? holdings[0] : null;
  const lines = totals.map(([currency, total]) => {
    const amount = new Decimal(total.unrealized_gain);
    const percent = total.unrealized_gain_percent === null ? "" : ` (${amount.isNegative() ? "" : "+"}${total.unrealized_gain_percent}%)`;
    const detail =
      single && single.price !== null
        ? `${shares(single.quantity)} worth ${formatMoney(single.value, currency)} at ${formatMoney(single.price, currency)}, against a cost basis of ` +
          `${formatMoney(total.cost_basis, currency)}${single.average_cost ? ` (average cost ${formatMoney(single.average_cost, currency)} a share)` : ""}`
        : `worth ${formatMoney(total.value, currency)} against a cost basis of ${formatMoney(total.cost_basis, currency)}`;
    return (
      `Your unrealised ${amount.isNegative() ? "loss" : "gain"} on ${what} is **${formatMoney(amount.abs().toFixed(), currency)}**${percent} ` +
      `${when}: ${detail}.`
    );
  });
  if (missing) lines.push(`${missing === 1 ? "One holding has" : `${missing} holdings have`} no cost basis and is left out.`);
  if (!single) lines.push("", ...holdings.map(holdingLine));
  return lines.join("\n");
}

export async function invested(asked: Asked, context: FamilyContext, tools: ToolRunner): Promise<string> {
  const period = asked.period;
  const result = await tools.call("summarize_trades", {
    ...tickerArgs(asked),
    ...(period ? { start_date: period.start, end_date: period.end } : {}),
  });
  const problem = notHeld(result);
  if (problem) return problem;
  const rows = result.securities as TradeEntry[];
  const when = period ? describe(period) : `so far (up to ${context.today})`;
  if (rows.length === 0)
    return `You made no trades${asked.tickers.length ? ` in ${listed(result.securities_asked as string[])}` : ""} ${when}.`;
  // The securities the figures are of: those asked, or those traded when one alone was.
  const what = asked.tickers.length
    ? ` in ${listed(result.securities_asked as string[])}`
    : rows.length === 1
      ? ` in ${rows[0].ticker}`
      : "";
  const totals = Object.entries(result.totals_by_currency as Record<string, TradeTotals>);
  const lines = totals.map(([currency, total]) => {
    const ofCurrency = rows.filter((row) => row.currency === currency);
    const money = (value: string) => formatMoney(value, currency);
    const one = ofCurrency.length === 1 ? ofCurrency[0] : null;
    const buys = one
      ? `${one.buys} buy${one.buys === 1 ? "" : "s"} of ${shares(one.bought_quantity)}, fees included`
      : `across ${ofCurrency.length} securities, fees included`;
    const sold = new Decimal(total.sold_amount);
    const net = new Decimal(total.net_invested);
    const sells = sold.isZero()
      ? ""
      : ` You also sold ${one ? `${shares(one.sold_quantity)} ` : ""}for ${money(total.sold_amount)} after fees, so the net you ` +
        `${net.isNegative() ? `took out is ${money(net.abs().toFixed())}` : `put in is ${money(total.net_invested)}`}.`;
    return `You invested **${money(total.bought_amount)}**${what} ${when}: ${buys}.${sells}`;
  });
  if (rows.length > 1) {
    lines.push("", "By security:");
    for (const row of rows) {
      const sold = row.sells ? `, ${formatMoney(row.sold_amount, row.currency)} sold (${shares(row.sold_quantity)})` : "";
      lines.push(`- ${row.ticker}: ${formatMoney(row.bought_amount, row.currency)} bought (${shares(row.bought_quantity)})${sold}`);
    }
  }
  return lines.join("\n");
}
