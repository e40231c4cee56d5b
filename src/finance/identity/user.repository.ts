import type { CreationAttributes, Sequelize, Transaction } from "sequelize";
import { bindParam, likePattern, selectRows } from "../../platform/common/sql";
import { FamilyModel } from "./family.model";
import { UserModel, type UserStatus } from "./user.model";
import { type UserRole } from "../../platform/security/actor";

export type UserRow = {
  id: string;
  familyId: string;
  email: string;
  name: string | null;
  role: UserRole;
  status: UserStatus;
  aiEnabled: boolean;
  createdAt: Date;
  updatedAt: Date;
  /** When a lock after repeated wrong passwords ends; null when the account is not locked now. */
  lockedUntil: Date | null;
  lastSignInAt: Date | null;
  lastSignInMethod: string | null;
};

export type UserListQuery = { search: string | null; roles: UserRole[]; statuses: UserStatus[] };

/** Rows removed by one step of a deletion, by table. */
export type RemovedRows = { table: string; count: number };

const USER_COLUMNS = `id, family_id AS "familyId", email, name, role, status, ai_enabled AS "aiEnabled",
  created_at AS "createdAt", updated_at AS "updatedAt", CASE WHEN locked_until > now() THEN locked_until END AS "lockedUntil",
  last_sign_in_at AS "lastSignInAt", last_sign_in_method AS "lastSignInMethod"`;

/**
 * What belongs to one user alone and goes when their account is deleted (docs/users.md, "User deletion
 * policy"). Credentials first: every way of signing in or acting as the user. Access and refresh
 * tokens and the SSO sessions' ID tokens go with their sessions (ON DELETE CASCADE). A new kind of
 * credential belongs in this list.
 */
const USER_CREDENTIAL_TABLES = [
  { table: "sso_identities", userColumn: "user_id" },
  { table: "sso_login_requests", userColumn: "user_id" },
  { table: "api_keys", userColumn: "user_id" },
  { table: "auth_sessions", userColumn: "user_id" },
] as const;

/** The user's own content: chats (their messages and tool calls cascade) and saved audit searches. */
const USER_CONTENT_TABLES = [
  { table: "chats", userColumn: "user_id" },
  { table: "audit_saved_searches", userColumn: "owner_user_id" },
] as const;

/** Serialises every change that can lower the number of active administrators (see lockAdministrators). */
const ADMINISTRATORS_LOCK = "finance-gateway:active-administrators";

export class UserRepository {
  constructor(private readonly sequelize: Sequelize) {}

  async page(query: UserListQuery, limit: number, offset: number): Promise<{ rows: UserRow[]; total: number }> {
    const conditions: string[] = [];
    const bind: unknown[] = [];
    if (query.search) {
      const pattern = bindParam(bind, likePattern(query.search));
      conditions.push(`(email ILIKE ${pattern} OR name ILIKE ${pattern} OR id::text = ${bindParam(bind, query.search.toLowerCase())})`);
    }
    if (query.roles.length) conditions.push(`role = ANY(${bindParam(bind, query.roles)}::text[])`);
    if (query.statuses.length) conditions.push(`status = ANY(${bindParam(bind, query.statuses)}::text[])`);
    const where = conditions.length ? `WHERE ${conditions.join(" AND ")}` : "";
    const paged = [...bind];
    const [rows, [count]] = await Promise.all([
      selectRows<UserRow>(
        this.sequelize,
        `SELECT ${USER_COLUMNS} FROM users ${where} ORDER BY lower(email), id LIMIT ${bindParam(paged, limit)} OFFSET ${bindParam(paged, offset)}`,
        paged,
      ),
      selectRows<{ total: string }>(this.sequelize, `SELECT count(*) AS total FROM users ${where}`, bind),
    ]);
    return { rows, total: Number(count.total) };
  }

  async insertFamily(family: CreationAttributes<FamilyModel>, transaction: Transaction): Promise<void> {
    await FamilyModel.create(family, { transaction });
  }

  async insertUser(user: CreationAttributes<UserModel>, transaction: Transaction): Promise<UserRow> {
    const created = await UserModel.create(user, { transaction });
    const { id, familyId, email, name, role, status, aiEnabled, createdAt, updatedAt } = created.get({ plain: true });
    return {
      ...{ id, familyId, email, name: name ?? null, role, status, aiEnabled, createdAt, updatedAt },
      ...{ lockedUntil: null, lastSignInAt: null, lastSignInMethod: null },
    };
  }

  /** E-mail addresses match whatever their case; `lock` holds the row until the transaction ends. */
  async byEmail(email: string, transaction?: Transaction, lock = false): Promise<UserRow | null> {
    const [row] = await selectRows<UserRow>(
      this.sequelize,
      `SELECT ${USER_COLUMNS} FROM users WHERE lower(email) = $1 ${lock ? "FOR UPDATE" : ""}`,
      [email.trim().toLowerCase()],
      transaction,
    );
    return row ?? null;
  }

  async byId(id: string, transaction?: Transaction, lock = false): Promise<UserRow | null> {
    const [row] = await selectRows<UserRow>(
      this.sequelize,
      `SELECT ${USER_COLUMNS} FROM users WHERE id = $1 ${lock ? "FOR UPDATE" : ""}`,
      [id],
      transaction,
    );
    return row ?? null;
  }

  async emailTaken(email: string, exceptUserId: string, transaction: Transaction): Promise<boolean> {
    const rows = await selectRows(
      this.sequelize,
      `SELECT 1 FROM users WHERE lower(email) = lower($1) AND id <> $2`,
      [email, exceptUserId],
      transaction,
    );
    return rows.length > 0;
  }

  /**
   * Takes the transaction-scoped lock that every change lowering the number of active administrators
   * holds while it counts them, so two administrators demoting or suspending each other at once
   * cannot both pass the "not the last one" check. An advisory lock, not row locks on the
   * administrators: those would be taken in a different order by each side and deadlock.
   */
  async lockAdministrators(transaction: Transaction): Promise<void> {
    await this.sequelize.query(`SELECT pg_advisory_xact_lock(hashtext($1))`, { bind: [ADMINISTRATORS_LOCK], transaction });
  }

  async activeAdministratorIds(transaction: Transaction): Promise<string[]> {
    const rows = await selectRows<{ id: string }>(
      this.sequelize,
      `SELECT id FROM users WHERE role = 'admin' AND status = 'active'`,
      [],
      transaction,
    );
    return rows.map((row) => row.id);
  }

  async setAiEnabled(id: string, enabled: boolean, transaction: Transaction): Promise<UserRow> {
    const [row] = await selectRows<UserRow>(
      this.sequelize,
      `UPDATE users SET ai_enabled = $2, updated_at = now() WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      [id, enabled],
      transaction,
    );
    return row;
  }

  async update(
    id: string,
    values: Partial<Pick<UserRow, "email" | "name" | "role" | "status">>,
    transaction: Transaction,
  ): Promise<UserRow> {
    const bind: unknown[] = [id];
    const sets = Object.entries(values)
      .filter(([, value]) => value !== undefined)
      .map(([column, value]) => `${column} = ${bindParam(bind, value)}`);
    const [row] = await selectRows<UserRow>(
      this.sequelize,
      `UPDATE users SET ${[...sets, "updated_at = now()"].join(", ")} WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      bind,
      transaction,
    );
    return row;
  }

  /** Members of the family other than `userId` whose accounts still exist (active or suspended). */
  async remainingMembers(familyId: string, userId: string, transaction: Transaction): Promise<number> {
    const [row] = await selectRows<{ count: string }>(
      this.sequelize,
      `SELECT count(*) AS count FROM users WHERE family_id = $1 AND id <> $2 AND status <> 'deleted'`,
      [familyId, userId],
      transaction,
    );
    return Number(row.count);
  }

  async removeCredentials(userId: string, transaction: Transaction): Promise<RemovedRows[]> {
    return this.removeOwned(USER_CREDENTIAL_TABLES, userId, transaction);
  }

  async removeContent(userId: string, transaction: Transaction): Promise<RemovedRows[]> {
    return this.removeOwned(USER_CONTENT_TABLES, userId, transaction);
  }

  /**
   * Users whose e-mail begins with `prefix` (any case), deleted accounts left out, in e-mail order; only
   * `familyId`'s members when one is given. The prefix is matched literally (`%` and `_` are not wildcards).
   */
  async byEmailPrefix(prefix: string, familyId: string | null, limit: number): Promise<UserRow[]> {
    const bind: unknown[] = [];
    const pattern = bindParam(bind, `${prefix.toLowerCase().replace(/[\\%_]/g, (char) => `\\${char}`)}%`);
    const conditions = [`lower(email) LIKE ${pattern}`, `status <> 'deleted'`];
    if (familyId) conditions.push(`family_id = ${bindParam(bind, familyId)}`);
    return selectRows<UserRow>(
      this.sequelize,
      `SELECT ${USER_COLUMNS} FROM users WHERE ${conditions.join(" AND ")} ORDER BY lower(email), id LIMIT ${bindParam(bind, limit)}`,
      bind,
    );
  }

  /** Lifts a lock after repeated wrong passwords; the row as it is now. */
  async unlock(id: string, transaction: Transaction): Promise<UserRow> {
    const [row] = await selectRows<UserRow>(
      this.sequelize,
      `UPDATE users SET failed_login_count = 0, locked_until = NULL, updated_at = now() WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      [id],
      transaction,
    );
    return row;
  }

  async renameFamily(familyId: string, name: string, transaction: Transaction): Promise<void> {
    await this.sequelize.query(`UPDATE families SET name = $2, updated_at = now() WHERE id = $1`, { bind: [familyId, name], transaction });
  }

  /**
   * Keeps the row, so audit events and anything else that names the user id still resolve, but with
   * nothing left that identifies or authenticates the person.
   */
  async anonymise(id: string, email: string, transaction: Transaction): Promise<UserRow> {
    const [row] = await selectRows<UserRow>(
      this.sequelize,
      `UPDATE users SET status = 'deleted', email = $2, name = NULL, password_hash = NULL, ai_enabled = false,
              failed_login_count = 0, locked_until = NULL, updated_at = now()
        WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      [id, email],
      transaction,
    );
    return row;
  }

  private async removeOwned(
    tables: ReadonlyArray<{ table: string; userColumn: string }>,
    userId: string,
    transaction: Transaction,
  ): Promise<RemovedRows[]> {
    const removed: RemovedRows[] = [];
    for (const { table, userColumn } of tables) {
      removed.push({ table, count: await this.deleteCount(`DELETE FROM ${table} WHERE ${userColumn} = $1`, [userId], transaction) });
    }
    return removed;
  }

  private async deleteCount(sql: string, bind: unknown[], transaction: Transaction): Promise<number> {
    const [, result] = await this.sequelize.query(sql, { bind, transaction });
    return (result as { rowCount?: number }).rowCount ?? 0;
  }
}
