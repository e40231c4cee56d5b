import { QueryTypes, type Sequelize, type Transaction } from "sequelize";

/** Runs a parameterised SELECT ($1, $2 … bind parameters) and returns plain rows. */
export function selectRows<Row extends object>(
  sequelize: Sequelize,
  sql: string,
  bind: unknown[],
  transaction?: Transaction,
): Promise<Row[]> {
  return sequelize.query<Row>(sql, { bind, type: QueryTypes.SELECT, transaction });
}

/** Orders batch results like DataLoader keys, with null for keys that matched nothing. */
export function alignToKeys<Row extends { id: string }>(keys: readonly string[], rows: Row[]): (Row | null)[] {
  const byId = new Map(rows.map((row) => [row.id, row]));
  return keys.map((key) => byId.get(key) ?? null);
}

/** Escapes LIKE wildcards so user text is matched literally. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
}
