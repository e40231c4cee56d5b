import { GraphQLError, GraphQLScalarType, Kind } from "graphql";

function parseWhole(raw: unknown): number {
  const text = typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw.trim() : "";
  if (!/^-?\d{1,9}$/.test(text)) throw new GraphQLError("must be a whole number");
  return Number(text);
}

/** A whole number; input may also be its decimal text ("15"), as sure-cli sends every flag. */
export const WholeNumberScalar = new GraphQLScalarType({
  name: "WholeNumber",
  description: 'A whole number. Input may be a number or its text ("15").',
  serialize: (value) => Number(value),
  parseValue: parseWhole,
  parseLiteral(ast) {
    if (ast.kind === Kind.INT || ast.kind === Kind.STRING) return parseWhole(ast.value);
    throw new GraphQLError("must be a whole number");
  },
});

function parseFlag(raw: unknown): boolean {
  if (typeof raw === "boolean") return raw;
  const text = typeof raw === "string" ? raw.trim().toLowerCase() : String(raw);
  if (["true", "1"].includes(text)) return true;
  if (["false", "0"].includes(text)) return false;
  throw new GraphQLError("must be one of true, false, 1, 0");
}

/** A boolean; input may also be "true", "false", "1" or "0" (query strings and sure-cli's flags). */
export const FlagScalar = new GraphQLScalarType({
  name: "Flag",
  description: 'A boolean. Input may be true/false or the text "true", "false", "1", "0".',
  serialize: (value) => Boolean(value),
  parseValue: parseFlag,
  parseLiteral(ast) {
    if (ast.kind === Kind.BOOLEAN || ast.kind === Kind.STRING || ast.kind === Kind.INT) return parseFlag(ast.value);
    throw new GraphQLError("must be a boolean");
  },
});
