import type { MigrationContext } from "./context";

/**
 * Two gaps against upstream's API (issue #29):
 *
 * - Upstream records a dividend, interest and a fee on an investment account as a trade of no
 *   quantity at no price whose amount is the cash it moves (Trade::CreateForm#create_income_trade).
 *   Migration 0022's CHECKs (qty <> 0, price > 0) forbade such a row; now a trade is either a
 *   security trade (a quantity, a positive price) or a cash trade (no quantity, no price, no fee).
 * - Upstream's holdings carry created_at and updated_at (its OpenAPI requires them). Provider
 *   snapshots and the positions computed from trades gain both; rows that exist get the migration's
 *   time (a constant default: no table rewrite).
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    ALTER TABLE trades DROP CONSTRAINT trades_qty_check, DROP CONSTRAINT trades_price_check,
      ADD CONSTRAINT trades_shape_check CHECK (CASE WHEN qty = 0 THEN price = 0 AND fee = 0 ELSE price > 0 END);

    ALTER TABLE holdings
      ADD COLUMN created_at timestamptz NOT NULL DEFAULT now(),
      ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
    ALTER TABLE positions
      ADD COLUMN created_at timestamptz NOT NULL DEFAULT now(),
      ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
  `);
}
