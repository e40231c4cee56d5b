import { FakeLunchflowServer, type FakeLunchflowTransaction } from "./lunchflow-server";
import { FakeSimplefinBridge, type FakeSimplefinTransaction } from "./simplefin-bridge";

/**
 * Local sandboxes of both bank-data providers, for trying bank connections by hand
 * (docs/bank-connections.md, "Try it without a bank"): the same protocol-strict fakes the tests run, filled with a few months of realistic
 * data in several currencies, posted and pending transactions, and a brokerage account with holdings
 * on each side. Prints one JSON line with what to paste, then a human summary.
 *
 *   npm run dev:banks -- [--lunchflow-port 8091] [--simplefin-port 8092]
 */
export const SANDBOX_LUNCHFLOW_KEY = "lf_sandbox_key";

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index > 0 && process.argv[index + 1] ? process.argv[index + 1] : fallback;
}

const DAY = 86_400_000;
const dayString = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY).toISOString().slice(0, 10);
const epoch = (daysAgo: number) => Math.floor((Date.now() - daysAgo * DAY) / 1000);

/** Deterministic amounts, so every sandbox run shows the same history relative to today. */
function pattern(seed: number) {
  let state = seed;
  return () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
}

function lunchflowHistory(prefix: string, currency: string, merchants: string[], salary: number, seed: number): FakeLunchflowTransaction[] {
  const next = pattern(seed);
  const rows: FakeLunchflowTransaction[] = [];
  for (let daysAgo = 89; daysAgo >= 2; daysAgo -= 3) {
    const merchant = merchants[Math.floor(next() * merchants.length)];
    const amount = -Number((5 + next() * 120).toFixed(2));
    rows.push({
      id: `${prefix}-${daysAgo}`,
      amount,
      currency,
      date: dayString(daysAgo),
      merchant,
      description: `${merchant} card payment`,
      isPending: false,
    });
    if (daysAgo % 30 === 29) {
      rows.push({
        id: `${prefix}-pay-${daysAgo}`,
        amount: salary,
        currency,
        date: dayString(daysAgo),
        merchant: "Employer",
        description: "Salary",
        isPending: false,
      });
    }
  }
  // Pending card payments: Lunch Flow sends them without ids.
  rows.push({
    id: "",
    amount: -23.4,
    currency,
    date: dayString(1),
    merchant: merchants[0],
    description: `${merchants[0]} card payment`,
    isPending: true,
  });
  rows.push({
    id: "",
    amount: -7.9,
    currency,
    date: dayString(0),
    merchant: merchants[1],
    description: `${merchants[1]} card payment`,
    isPending: true,
  });
  return rows;
}

function simplefinHistory(prefix: string, payees: string[], paycheck: string, seed: number): FakeSimplefinTransaction[] {
  const next = pattern(seed);
  const rows: FakeSimplefinTransaction[] = [];
  for (let daysAgo = 89; daysAgo >= 2; daysAgo -= 2) {
    const payee = payees[Math.floor(next() * payees.length)];
    rows.push({
      id: `${prefix}-${daysAgo}`,
      posted: epoch(daysAgo),
      amount: `-${(4 + next() * 90).toFixed(2)}`,
      description: `${payee} purchase`,
      payee,
    });
    if (daysAgo % 14 === 1)
      rows.push({ id: `${prefix}-pay-${daysAgo}`, posted: epoch(daysAgo), amount: paycheck, description: "Payroll", payee: "Payroll" });
  }
  // Pending: posted 0 until the bank posts it (under a new id).
  rows.push({
    id: `${prefix}-pending-1`,
    posted: 0,
    transacted_at: epoch(1),
    amount: "-18.75",
    description: `${payees[0]} purchase`,
    payee: payees[0],
    pending: true,
  });
  return rows;
}

export async function startSandboxes(ports: { lunchflow: number; simplefin: number }) {
  const lunchflow = new FakeLunchflowServer();
  lunchflow.keys.set(SANDBOX_LUNCHFLOW_KEY, "active");
  lunchflow.accounts = [
    {
      id: 1001,
      name: "Girokonto",
      institution_name: "Sparkasse Sandbox",
      provider: "gocardless",
      status: "ACTIVE",
      balance: { amount: 3125.4, currency: "EUR" },
      transactions: lunchflowHistory("giro", "EUR", ["REWE", "Bäckerei Schmidt", "DB Fernverkehr", "Drogerie"], 3400, 7),
      holdings: null,
    },
    {
      id: 1002,
      name: "Current Account",
      institution_name: "Monzo Sandbox",
      provider: "truelayer",
      status: "ACTIVE",
      balance: { amount: 842.15, currency: "GBP" },
      transactions: lunchflowHistory("monzo", "GBP", ["Tesco", "Pret A Manger", "TfL"], 2100, 11),
      holdings: null,
    },
    {
      id: 1003,
      name: "Depot",
      institution_name: "Broker Sandbox AG",
      provider: "finapi",
      currency: "EUR",
      status: "ACTIVE",
      balance: { amount: 15420, currency: "EUR" },
      transactions: [],
      holdings: {
        holdings: [
          {
            security: { name: "iShares Core MSCI World", currency: "EUR", tickerSymbol: "EUNL", isin: "IE00B4L5Y983" },
            quantity: 120,
            price: 95.5,
            value: 11460,
            costBasis: 9800,
            currency: "EUR",
          },
          {
            security: { name: "Apple Inc.", currency: "USD", tickerSymbol: "AAPL", isin: "US0378331005" },
            quantity: "20",
            price: "198.00",
            value: "3960.00",
            costBasis: null,
            currency: "EUR",
          },
        ],
        totalValue: 15420,
        currency: "EUR",
      },
    },
  ];
  const simplefin = new FakeSimplefinBridge();
  simplefin.sandbox = true;
  const lunchflowUrl = await lunchflow.start(ports.lunchflow);
  const simplefinUrl = await simplefin.start(ports.simplefin);
  const org = { name: "Credit Union Sandbox", domain: "cu.example", "sfin-url": `${simplefinUrl}/simplefin` };
  simplefin.accounts = [
    {
      id: "sf-checking",
      name: "Everyday Checking",
      currency: "USD",
      balance: "2480.12",
      "available-balance": "2380.12",
      "balance-date": epoch(0),
      org,
      transactions: simplefinHistory("chk", ["Whole Foods", "Shell", "Target", "Blue Bottle"], "2150.00", 5),
    },
    {
      id: "sf-savings",
      name: "Savings (CAD)",
      currency: "CAD",
      balance: "9100.00",
      "balance-date": epoch(0),
      org,
      transactions: [{ id: "sav-interest", posted: epoch(20), amount: "12.40", description: "Interest", payee: "Interest" }],
    },
    {
      id: "sf-brokerage",
      name: "Brokerage",
      currency: "USD",
      balance: "25310.00",
      "balance-date": epoch(0),
      org,
      transactions: [],
      holdings: [
        {
          id: "h-vti",
          created: String(epoch(30)),
          currency: "USD",
          symbol: "VTI",
          description: "Vanguard Total Stock Market ETF",
          shares: "60",
          market_value: "17310.00",
          cost_basis: "14000.00",
          purchase_price: "233.33",
        },
        {
          id: "h-bnd",
          created: String(epoch(30)),
          currency: "USD",
          symbol: "BND",
          description: "Vanguard Total Bond Market ETF",
          shares: "110",
          market_value: "8000.00",
          cost_basis: "8200.00",
          purchase_price: "74.55",
        },
      ],
    },
  ];
  return {
    lunchflow: { baseUrl: lunchflowUrl, apiKey: SANDBOX_LUNCHFLOW_KEY },
    simplefin: { setupToken: simplefin.newSetupToken(), setupTokenUrl: `${simplefinUrl}/sandbox/setup-token` },
    stop: () => Promise.all([lunchflow.stop(), simplefin.stop()]),
  };
}

async function main(): Promise<void> {
  const sandboxes = await startSandboxes({
    lunchflow: Number(option("lunchflow-port", "8091")),
    simplefin: Number(option("simplefin-port", "8092")),
  });
  const { lunchflow, simplefin } = sandboxes;
  process.stdout.write(JSON.stringify({ lunchflow, simplefin }) + "\n");
  process.stdout.write(
    [
      "",
      "Bank sandboxes are running (Ctrl-C stops them). Start the service with ALLOW_INSECURE_UPSTREAMS=true OUTBOUND_ALLOW_PRIVATE=true to reach them.",
      `  Lunch Flow        base URL     ${lunchflow.baseUrl}`,
      `                    API key      ${lunchflow.apiKey}`,
      `  SimpleFIN Bridge  setup token  ${simplefin.setupToken}`,
      `                    (each token works once; a new one: curl -s ${simplefin.setupTokenUrl})`,
      "",
    ].join("\n"),
  );
  const stop = () => void sandboxes.stop().then(() => process.exit(0));
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

if (require.main === module) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
