import type { Sequelize } from "sequelize";
import { classificationOf, type AccountType } from "../../finance/accounts/account.model";
import type { CategoryClassification } from "../../finance/categories/category.model";
import { newId } from "../../platform/common/ids";
import { valuationName } from "../../finance/ledger/ledger.service";
import type { Services } from "../services";
import type { Actor } from "../../platform/security/actor";
import { DemoRepository, type DemoRows } from "./demo.repository";

export const DEMO_EMAIL = "demo@finance-gateway.local";

export type DemoResult = { email: string; api_key: string; read_api_key: string; family_id: string; transactions: number };

/** Deterministic pseudo-random numbers, so every demo family looks the same (mulberry32). */
export function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    between: (low: number, high: number) => low + (high - low) * next(),
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)],
    int: (low: number, high: number) => low + Math.floor(next() * (high - low + 1)),
  };
}

/**
 * Balances 18 months ago, each account's opening anchor (dated two years back, the brokerage's four, as upstream dates one
 * for an account with a younger history); today's follow from the transactions, so every month-end balance the service
 * derives is one a real household could have had (the card is paid in full each month, so what is owed
 * on it stays a positive amount of about a month's spending).
 */
const ACCOUNTS: Array<{ key: string; name: string; type: AccountType; opening: number; openedYearsAgo?: number }> = [
  { key: "checking", name: "Everyday Checking", type: "depository", opening: 6250.32 },
  { key: "savings", name: "High-Yield Savings", type: "depository", opening: 12300.0 },
  { key: "card", name: "Rewards Credit Card", type: "credit_card", opening: 0 },
  // Its trades go back four years (seedInvestments): its opening anchor is dated before the first.
  { key: "brokerage", name: "Brokerage", type: "investment", opening: 42210.55, openedYearsAgo: 4 },
  { key: "house", name: "Family Home", type: "property", opening: 485000.0 },
  { key: "car", name: "Family Car", type: "vehicle", opening: 31500.0 },
];

/**
 * What the house and the car were worth some months before today (reconciliations, as upstream records
 * a new value): tracked by value only, so their history moves at each valuation and nowhere else.
 */
const VALUE_UPDATES: Array<{ account: string; monthsAgo: number; amount: number }> = [
  { account: "house", monthsAgo: 18, amount: 492000.0 },
  { account: "house", monthsAgo: 12, amount: 501500.0 },
  { account: "house", monthsAgo: 6, amount: 508000.0 },
  { account: "house", monthsAgo: 1, amount: 515250.0 },
  { account: "car", monthsAgo: 12, amount: 27800.0 },
  { account: "car", monthsAgo: 6, amount: 25400.0 },
  { account: "car", monthsAgo: 1, amount: 23900.0 },
];

const CATEGORIES: Array<{ key: string; name: string; classification: CategoryClassification; color: string; icon: string }> = [
  { key: "salary", name: "Salary", classification: "income", color: "#10a861", icon: "briefcase" },
  { key: "interest", name: "Interest", classification: "income", color: "#1e9e4a", icon: "piggy-bank" },
  { key: "groceries", name: "Groceries", classification: "expense", color: "#eb5429", icon: "shopping-cart" },
  { key: "dining", name: "Food & Drink", classification: "expense", color: "#fd7f6f", icon: "utensils" },
  { key: "rent", name: "Rent", classification: "expense", color: "#6172f3", icon: "house" },
  { key: "utilities", name: "Utilities", classification: "expense", color: "#f79009", icon: "lightbulb" },
  { key: "transport", name: "Transportation", classification: "expense", color: "#0ba5ec", icon: "bus" },
  { key: "entertainment", name: "Entertainment", classification: "expense", color: "#df4e8d", icon: "film" },
  { key: "shopping", name: "Shopping", classification: "expense", color: "#e99537", icon: "shopping-bag" },
  { key: "health", name: "Healthcare", classification: "expense", color: "#4da568", icon: "heart-pulse" },
  { key: "travel", name: "Travel", classification: "expense", color: "#7f56d9", icon: "plane" },
  { key: "subscriptions", name: "Subscriptions", classification: "expense", color: "#875bf7", icon: "repeat" },
];

/** Spending patterns per month: merchants, how often, and the usual amount range. */
const SPENDING: Array<{
  category: string;
  merchants: string[];
  perMonth: number;
  low: number;
  high: number;
  account: string;
  tag?: string;
}> = [
  {
    category: "groceries",
    merchants: ["Whole Foods", "Trader Joe's", "Safeway", "Costco"],
    perMonth: 18,
    low: 18,
    high: 160,
    account: "card",
    tag: "Essential",
  },
  {
    category: "dining",
    merchants: ["Starbucks", "Chipotle", "Blue Bottle Coffee", "Sweetgreen", "Shake Shack"],
    perMonth: 38,
    low: 4,
    high: 65,
    account: "card",
    tag: "Discretionary",
  },
  { category: "transport", merchants: ["Shell", "Chevron", "Uber", "Lyft", "BART"], perMonth: 22, low: 3, high: 70, account: "card" },
  {
    category: "shopping",
    merchants: ["Amazon", "Target", "Walmart", "Best Buy", "REI", "Home Depot", "IKEA"],
    perMonth: 14,
    low: 9,
    high: 240,
    account: "card",
    tag: "Discretionary",
  },
  {
    category: "entertainment",
    merchants: ["AMC Theatres", "Ticketmaster", "Steam"],
    perMonth: 4,
    low: 12,
    high: 120,
    account: "card",
    tag: "Discretionary",
  },
  { category: "health", merchants: ["CVS Pharmacy", "Walgreens"], perMonth: 2, low: 8, high: 90, account: "checking", tag: "Essential" },
  { category: "utilities", merchants: ["PG&E", "Comcast", "AT&T"], perMonth: 3, low: 45, high: 180, account: "checking", tag: "Essential" },
];

const SUBSCRIPTIONS = [
  { merchant: "Netflix", amount: "15.49" },
  { merchant: "Spotify", amount: "11.99" },
  { merchant: "Apple", amount: "2.99" },
];

const TRAVEL_MERCHANTS = ["Delta Air Lines", "Airbnb", "Marriott"];
const EMPLOYER = "Acme Corp";

const TAGS = [
  { name: "Essential", color: "#e99537" },
  { name: "Discretionary", color: "#4da568" },
  { name: "Reimbursable", color: "#6172f3" },
  { name: "Vacation", color: "#df4e8d" },
];

const isoDate = (date: Date) => date.toISOString().slice(0, 10);

function allMerchantNames(): string[] {
  return [...new Set([...SPENDING.flatMap((s) => s.merchants), ...SUBSCRIPTIONS.map((s) => s.merchant), ...TRAVEL_MERCHANTS, EMPLOYER])];
}

/**
 * Creates the demo family: four accounts fed by transactions and a house and a car tracked by value, categories, 30+ merchants, tags and about 2,000
 * transactions over the last 18 months, with monthly card payments and savings transfers.
 * Run again, it leaves the data alone and issues fresh keys for the demo user.
 *
 * The demo user is an instance administrator (so the admin API can be tried), which on a shared
 * instance would let its keys list everyone: it refuses to join an instance with other families
 * unless forced.
 */
export async function seedDemo(
  sequelize: Sequelize,
  services: Services,
  options: { force?: boolean; today?: Date } = {},
): Promise<DemoResult> {
  const today = options.today ?? new Date();
  let user = await services.users.findByEmail(DEMO_EMAIL);
  let count = 0;
  const fresh = !user;
  if (!user) {
    const families = await new DemoRepository(sequelize).countFamilies();
    if (families > 0 && !options.force) {
      throw new Error(
        `this instance already has ${families} ${families === 1 ? "family" : "families"}; the demo user is an instance administrator whose keys can list every user and SSO provider. Run the demo on an instance of its own, or add --force`,
      );
    }
    user = await services.users.create({
      email: DEMO_EMAIL,
      name: "Demo User",
      role: "admin",
      familyName: "Demo family",
      currency: "USD",
      aiEnabled: true,
    });
    count = await seedFamily(sequelize, user.familyId, today);
  }
  const readWrite = await services.apiKeys.create(user.id, { scope: "read_write", name: "Demo read/write key" });
  const read = await services.apiKeys.create(user.id, { scope: "read", name: "Demo read-only key" });
  if (fresh) {
    const actor = await services.apiKeys.authenticate(readWrite.plaintext);
    await seedPlanning(services, actor, today);
    await seedInvestments(sequelize, services, actor, today);
  }
  return { email: user.email, api_key: readWrite.plaintext, read_api_key: read.plaintext, family_id: user.familyId, transactions: count };
}

/** The demo brokerage's securities: a start price 47 months ago and a monthly drift (in basis points), wobbling. */
const SECURITIES = [
  { ticker: "VTI|ARCX", start: 205.4, drift: 90, wobble: 4.5 },
  { ticker: "AAPL|XNAS", start: 148.2, drift: 120, wobble: 7.1 },
  { ticker: "BND|XNAS", start: 72.85, drift: 5, wobble: 0.9 },
];

/** The demo's trades: months ago, security (index), side, quantity. Every sell is covered. */
const TRADES: Array<[number, number, "buy" | "sell", number]> = [
  [46, 0, "buy", 40],
  [46, 2, "buy", 100],
  [42, 1, "buy", 25],
  [36, 0, "buy", 15],
  [32, 2, "buy", 60],
  [28, 1, "buy", 10],
  [26, 0, "sell", 10],
  [22, 2, "sell", 40],
  [18, 0, "buy", 12],
  [14, 1, "sell", 15],
  [10, 2, "buy", 30],
  [6, 0, "buy", 8],
  [4, 1, "buy", 5],
  [2, 2, "sell", 20],
];

/** Months of prices: one a month, on the 1st, for the four years the trades span. */
const PRICE_MONTHS = 48;

/**
 * The demo brokerage tracked by hand (docs/investments.md): monthly closing prices of three securities
 * for the last four years, then the trades, made through the service as a client makes them, so the
 * holdings, cash and balances are the ones the API computes.
 */
async function seedInvestments(sequelize: Sequelize, services: Services, actor: Actor, today: Date): Promise<void> {
  const monthDay = (monthsAgo: number, dayOfMonth: number) =>
    isoDate(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - monthsAgo, dayOfMonth)));
  const priceOf = (index: number, monthsAgo: number) => {
    const { start, drift, wobble } = SECURITIES[index];
    const months = PRICE_MONTHS - 1 - monthsAgo;
    return (start * (1 + (drift / 10_000) * months) + wobble * Math.sin(months * 1.7 + index)).toFixed(2);
  };
  const { items } = await services.accounts.page(actor, 1, 100);
  const brokerage = items.find((account) => account.name === "Brokerage")!;
  const securityIds: string[] = [];
  for (const [position, [monthsAgo, index, side, qty]] of TRADES.entries()) {
    const trade = await services.trades.create(actor, {
      accountId: brokerage.id,
      date: monthDay(monthsAgo, 10),
      type: side,
      qty: String(qty),
      price: priceOf(index, monthsAgo),
      fee: position % 3 === 0 ? "4.95" : "0",
      ticker: SECURITIES[index].ticker,
    });
    securityIds[index] = trade.securityId;
  }
  const prices = SECURITIES.flatMap((_security, index) =>
    Array.from({ length: PRICE_MONTHS }, (_unused, monthsAgo) => ({
      securityId: securityIds[index],
      date: monthDay(monthsAgo, 1),
      price: priceOf(index, monthsAgo),
      currency: "USD",
    })),
  );
  await sequelize.transaction((transaction) => services.trades.recordPrices(prices, transaction));
}

/** Allocations of the demo budgets, by category name. */
const ALLOCATIONS: Record<string, string> = {
  Groceries: "700",
  "Food & Drink": "400",
  Rent: "2200",
  Utilities: "300",
  Transportation: "250",
};

/**
 * The demo family's planning: a budget for this month and the last, the recurring bills its history
 * shows (detected) plus one entered by hand, and two rules (one applied once, so a run is listed). The
 * rules only set categories the demo's transactions already have: the seeded history stays as it was.
 */
async function seedPlanning(services: Services, actor: Actor, today: Date): Promise<void> {
  const month = (offset: number) => isoDate(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + offset, 1)));
  for (const [offset, spending] of [
    [-1, "4000"],
    [0, "4200"],
  ] as const) {
    const budget = await services.budgets.setBudget(actor, {
      startDate: month(offset),
      budgetedSpending: spending,
      expectedIncome: "6500",
    });
    const { items } = await services.budgets.listCategories(actor, { budgetId: budget.row.id }, 1, 100);
    for (const item of items) {
      const amount = ALLOCATIONS[item.row.categoryName];
      if (amount)
        await services.budgets.setCategory(actor, { budgetId: budget.row.id, categoryId: item.row.categoryId, budgetedSpending: amount });
    }
  }
  await services.recurring.detect(actor, isoDate(today));
  const due = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 20));
  await services.recurring.create(actor, {
    name: "Car insurance",
    amount: "118.40",
    expectedDayOfMonth: 20,
    lastOccurrenceDate: isoDate(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 20))),
    nextExpectedDate: isoDate(due),
  });
  const categories = await services.categories.list(actor);
  const idOf = (name: string) => categories.find((category) => category.name === name)!.id;
  const coffee = await services.rules.create(actor, {
    name: "Coffee is Food & Drink",
    conditions: [{ conditionType: "transaction_name", operator: "like", value: "coffee" }],
    actions: [{ actionType: "set_transaction_category", value: idOf("Food & Drink") }],
  });
  await services.rules.create(actor, {
    name: "Rides are Transportation",
    conditions: [
      {
        conditionType: "compound",
        operator: "or",
        subConditions: [
          { conditionType: "transaction_name", operator: "like", value: "uber" },
          { conditionType: "transaction_name", operator: "like", value: "lyft" },
        ],
      },
    ],
    actions: [{ actionType: "set_transaction_category", value: idOf("Transportation") }],
  });
  await services.rules.apply(actor, coffee.id);
}

async function seedFamily(sequelize: Sequelize, familyId: string, today: Date): Promise<number> {
  const rng = random(20240115);
  const accounts = Object.fromEntries(ACCOUNTS.map((a) => [a.key, { ...a, id: newId() }]));
  const categories = Object.fromEntries(CATEGORIES.map((c) => [c.key, { ...c, id: newId() }]));
  const merchants = Object.fromEntries(allMerchantNames().map((name) => [name, newId()]));
  const tags = Object.fromEntries(TAGS.map((t) => [t.name, newId()]));
  const transactions: DemoRows["transactions"] = [];
  const transactionTags: Array<{ transactionId: string; tagId: string }> = [];
  const transfers: Array<{ id: string; familyId: string; outflowTransactionId: string; inflowTransactionId: string }> = [];
  /** Card charges per calendar month ("year-monthIndex"), paid by the next month's payment. */
  const cardCharges = new Map<string, number>();
  /** Upstream's default for an account whose history is younger: two years before today (the brokerage's: four). */
  const openingAnchorDate = (years = 2) =>
    isoDate(new Date(Date.UTC(today.getUTCFullYear() - years, today.getUTCMonth(), today.getUTCDate())));

  const add = (
    account: string,
    date: Date,
    amount: number,
    name: string,
    options: { category?: string; merchant?: string; tag?: string; notes?: string } = {},
  ) => {
    if (date > today) return null;
    const id = newId();
    if (account === "card" && amount > 0) {
      const month = `${date.getUTCFullYear()}-${date.getUTCMonth()}`;
      cardCharges.set(month, (cardCharges.get(month) ?? 0) + amount);
    }
    transactions.push({
      id,
      familyId,
      accountId: accounts[account].id,
      date: isoDate(date),
      amount: amount.toFixed(2),
      currency: "USD",
      name,
      notes: options.notes ?? null,
      categoryId: options.category ? categories[options.category].id : null,
      merchantId: options.merchant ? merchants[options.merchant] : null,
    });
    if (options.tag) transactionTags.push({ transactionId: id, tagId: tags[options.tag] });
    return id;
  };
  const transfer = (from: string, to: string, date: Date, amount: number, name: string) => {
    const outflow = add(from, date, amount, name);
    const inflow = add(to, date, -amount, name);
    if (outflow && inflow) transfers.push({ id: newId(), familyId, outflowTransactionId: outflow, inflowTransactionId: inflow });
  };

  for (let monthsAgo = 17; monthsAgo >= 0; monthsAgo--) {
    const year = today.getUTCFullYear();
    const month = today.getUTCMonth() - monthsAgo;
    const day = (d: number) => new Date(Date.UTC(year, month, d));
    const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();

    add("checking", day(1), -4200, "Payroll deposit", { category: "salary", merchant: EMPLOYER });
    add("checking", day(15), -4200, "Payroll deposit", { category: "salary", merchant: EMPLOYER });
    add("checking", day(1), 1950, "Monthly rent", { category: "rent", tag: "Essential" });
    add("savings", day(daysInMonth), -Number(rng.between(38, 52).toFixed(2)), "Interest paid", { category: "interest" });
    for (const { merchant, amount } of SUBSCRIPTIONS)
      add("card", day(rng.int(3, 9)), Number(amount), merchant, { category: "subscriptions", merchant });
    for (const pattern of SPENDING) {
      const times = Math.max(0, Math.round(pattern.perMonth * rng.between(0.85, 1.15)));
      for (let i = 0; i < times; i++) {
        const merchant = rng.pick(pattern.merchants);
        add(pattern.account, day(rng.int(1, daysInMonth)), Number(rng.between(pattern.low, pattern.high).toFixed(2)), merchant, {
          category: pattern.category,
          merchant,
          tag: pattern.tag,
        });
      }
    }
    if (monthsAgo % 6 === 2) {
      for (const merchant of TRAVEL_MERCHANTS) {
        add("card", day(rng.int(5, 20)), Number(rng.between(180, 900).toFixed(2)), merchant, {
          category: "travel",
          merchant,
          tag: "Vacation",
          notes: "Summer trip",
        });
      }
    }
    if (rng.next() < 0.3)
      add("checking", day(rng.int(2, 27)), -Number(rng.between(20, 250).toFixed(2)), "Expense reimbursement", {
        category: "salary",
        tag: "Reimbursable",
      });
    // The statement: everything charged to the card last month, paid in full on the 25th.
    const lastMonth = new Date(Date.UTC(year, month - 1, 1));
    const statement = cardCharges.get(`${lastMonth.getUTCFullYear()}-${lastMonth.getUTCMonth()}`) ?? 0;
    if (statement > 0) transfer("checking", "card", day(25), Number(statement.toFixed(2)), "Credit card payment");
    if (monthsAgo % 3 === 0) transfer("checking", "savings", day(16), 500, "Savings contribution");
    if (monthsAgo % 6 === 0) transfer("checking", "brokerage", day(20), 1000, "Brokerage deposit");
  }

  await new DemoRepository(sequelize).insert({
    accounts: ACCOUNTS.map((a) => ({
      id: accounts[a.key].id,
      familyId,
      name: a.name,
      accountType: a.type,
      classification: classificationOf(a.type),
      currency: "USD",
      // Derived by the ledger from the opening anchor and the transactions once they are written.
      balance: "0",
    })),
    valuations: [
      ...ACCOUNTS.map((a) => ({
        id: newId(),
        familyId,
        accountId: accounts[a.key].id,
        date: openingAnchorDate(a.openedYearsAgo),
        amount: a.opening.toFixed(2),
        currency: "USD",
        kind: "opening_anchor" as const,
        name: valuationName("opening_anchor", a.type),
      })),
      ...VALUE_UPDATES.map((update) => ({
        id: newId(),
        familyId,
        accountId: accounts[update.account].id,
        date: isoDate(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - update.monthsAgo, 15))),
        amount: update.amount.toFixed(2),
        currency: "USD",
        kind: "reconciliation" as const,
        name: valuationName("reconciliation", accounts[update.account].type),
      })),
    ],
    categories: Object.values(categories).map(({ id, name, classification, color, icon }) => ({
      id,
      familyId,
      name,
      classification,
      color,
      icon,
    })),
    merchants: Object.entries(merchants).map(([name, id]) => ({ id, familyId, name })),
    tags: TAGS.map((t) => ({ id: tags[t.name], familyId, name: t.name, color: t.color })),
    transactions,
    transactionTags,
    transfers,
  });
  return transactions.length;
}
