/** pg's own serialiser and escaping of parameter values (untyped in @types/pg); copyOut uses them. */
declare module "pg/lib/utils" {
  /** A parameter as pg sends it: text, a Buffer, or null (arrays in PostgreSQL's array syntax, dates in ISO 8601). */
  export function prepareValue(value: unknown): string | Buffer | null;
  /** A string as a PostgreSQL literal: quoted, with quotes doubled and backslashes escaped. */
  export function escapeLiteral(value: string): string;
}
