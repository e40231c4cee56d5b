import { GraphQLError, GraphQLScalarType, Kind } from "graphql";
import { parseAmount, toAmountString } from "./money";

function parseDecimal(raw: unknown): string {
  const checked = parseAmount(raw);
  if (!checked.ok) throw new GraphQLError(checked.reason);
  return toAmountString(checked.value);
}

/** Exact decimal money amount, as a string ("-12.5"); input accepts a string or a number. */
export const DecimalScalar = new GraphQLScalarType({
  name: "Decimal",
  description: 'An exact decimal number as a string, e.g. "-1234.56". Input may be a string or a number.',
  // Stored as numeric(19,4): "1200.5000" is served as "1200.5".
  serialize: (value) => toAmountString(String(value)),
  parseValue: parseDecimal,
  parseLiteral(ast) {
    if (ast.kind === Kind.STRING || ast.kind === Kind.INT || ast.kind === Kind.FLOAT) return parseDecimal(ast.value);
    throw new GraphQLError("must be a string or a number");
  },
});

function parseCalendarDate(raw: unknown): string {
  if (typeof raw !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(raw)) throw new GraphQLError("must be a YYYY-MM-DD date");
  const parsed = new Date(`${raw}T00:00:00Z`);
  if (Number.isNaN(parsed.getTime()) || parsed.toISOString().slice(0, 10) !== raw) throw new GraphQLError("is not a calendar date");
  return raw;
}

/** ISO 8601 calendar date, "2024-01-15", kept as text: a date has no time zone. */
export const CalendarDateScalar = new GraphQLScalarType({
  name: "Date",
  description: "An ISO 8601 calendar date, YYYY-MM-DD.",
  serialize: (value) => String(value),
  parseValue: parseCalendarDate,
  parseLiteral(ast) {
    if (ast.kind === Kind.STRING) return parseCalendarDate(ast.value);
    throw new GraphQLError("must be a YYYY-MM-DD string");
  },
});
