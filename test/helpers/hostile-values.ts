import fc from "fast-check";
import { getNullableType, isEnumType, isInputObjectType, isListType, isNonNullType, type GraphQLInputType } from "graphql";
import { camelToSnake } from "../../rest-adapter/case";

/**
 * fast-check values a hostile client sends: text that databases and parsers choke on (NUL, lone
 * surrogates, 10 000 characters, SQL, markup), numbers out of every range, wrong types, and, for
 * fields that name records, ids that exist, ids that do not, and ids that are not ids. No value looks
 * like a URL with a host, so no test sends anything off this machine.
 */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ maxLength: 20, unit: "binary" }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "a\u0000b",
    "\ud800",
    "x".repeat(10_000),
    "'; DROP TABLE transactions; --",
    "<script>alert(1)</script>",
    "%00",
    "../../etc/passwd",
    "1e309",
    "NaN",
    "-0",
    "2024-02-30",
    "9999-99-99",
    "00000000-0000-0000-0000-000000000000",
    "💸💸💸",
    "null",
  ),
);

const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.constantFrom(0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e300, -1e-300, 0.1 + 0.2),
);

export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.oneof(hostileText, hostileNumber), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(hostileText, hostileNumber), { maxKeys: 3 }),
);

/** The same value of the right type, most of the time, and anything at all otherwise. */
function mostlyTyped(typed: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: typed, weight: 4 }, { arbitrary: anyJson, weight: 1 });
}

export type ValueOptions = {
  /** Ids of records that exist, so some writes reach the rules behind the lookups. */
  ids: string[];
  /** snake_case keys, as REST bodies spell them. */
  snakeCase?: boolean;
};

/** An arbitrary for a value of a GraphQL input type, hostile in the ways above. */
export function valueOf(type: GraphQLInputType, options: ValueOptions, depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return valueOf(type.ofType, options, depth);
  const nullable = getNullableType(type);
  if (isListType(nullable)) return mostlyTyped(fc.array(valueOf(nullable.ofType, options, depth + 1), { maxLength: 3 }));
  if (isInputObjectType(nullable)) {
    if (depth > 3) return fc.constant({});
    const fields = Object.values(nullable.getFields());
    const record = fc.record(
      Object.fromEntries(
        fields.map((field) => [options.snakeCase ? camelToSnake(field.name) : field.name, valueOf(field.type, options, depth + 1)]),
      ),
      { requiredKeys: [] },
    );
    return mostlyTyped(record);
  }
  if (isEnumType(nullable)) return mostlyTyped(fc.constantFrom(...nullable.getValues().map((value) => value.value)));
  switch (nullable.name) {
    case "ID":
      return mostlyTyped(fc.oneof(fc.constantFrom(...(options.ids.length ? options.ids : ["none"])), fc.uuid(), hostileText));
    case "Int":
      return mostlyTyped(fc.oneof(fc.integer({ min: -5, max: 200 }), hostileNumber));
    case "Float":
      return mostlyTyped(hostileNumber);
    case "Boolean":
      return mostlyTyped(fc.boolean());
    case "DateTimeISO":
      return mostlyTyped(
        fc.oneof(
          fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
          hostileText,
        ),
      );
    default:
      // Money, dates and other text-carried scalars: plausible values beside hostile ones.
      return mostlyTyped(fc.oneof(hostileText, fc.constantFrom("12.34", "-0.01", "2024-01-15", "USD", "expense", "income", "read")));
  }
}
