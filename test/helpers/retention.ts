import { randomUUID } from "node:crypto";
import type { Client } from "pg";

/**
 * Events of a past month, as an instance that ran then would hold them: inserted with their queue
 * entries (as record() writes them), for the sequencer to link. Half are `auth.login.failed` from
 * 10.9.x.x, half `user.updated`.
 */
export async function seedMonth(superuser: Client, month: string, count: number): Promise<string[]> {
  await superuser.query("SELECT audit_create_month_partition($1::date)", [`${month}-01`]);
  const ids: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const id = randomUUID();
    ids.push(id);
    // Microseconds too: an archive must keep the time exactly as stored.
    const at = new Date(Date.parse(`${month}-01T00:00:00Z`) + (index + 1) * 3_600_000).toISOString().replace("Z", "456Z");
    const failed = index % 2 === 0;
    await superuser.query(
      `WITH e AS (INSERT INTO audit_events (id, occurred_at, event_type, severity, user_email, action, ip_address, user_agent, changes, error)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'retention-test', $8::jsonb, $9) RETURNING id, occurred_at)
       INSERT INTO audit_unchained (event_id, occurred_at) SELECT id, occurred_at FROM e`,
      [
        id,
        at,
        failed ? "auth.login.failed" : "user.updated",
        failed ? "warning" : "info",
        `person${index}@example.com`,
        failed ? "login" : "update",
        `10.9.${index % 4}.${index}`,
        failed ? null : JSON.stringify({ name: { old: `Old "${index}"`, new: `New\n${index} é` } }),
        failed ? "bad password" : null,
      ],
    );
  }
  return ids;
}

/** Every stored column of a month's events, in a stable order: what "identical event by event" compares. */
export async function monthRows(superuser: Client, month: string): Promise<unknown[]> {
  const { rows } = await superuser.query(
    `SELECT id, to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS at, event_type, severity, user_id, user_email,
            provider, action, resource_type, resource_id, resource_label, host(ip_address) AS ip, user_agent, session_id, request_id,
            changes, error, search_text
       FROM audit_events WHERE occurred_at >= $1::date AND occurred_at < ($1::date + interval '1 month') ORDER BY occurred_at, id`,
    [`${month}-01`],
  );
  return rows;
}
