import type { MigrationContext } from "./context";

/**
 * Issue 34, item 4: free-text totals without rechecking every match in the table.
 *
 * A search word is matched as a substring of an event's search text, through the trigram index. That
 * index only proposes candidates, so counting a page's capped total for a rare word (account_locked:
 * 2.7 % of events, 10 001 matches to prove the cap) read thousands of heap pages to recheck them and
 * ran out of AUDIT_COUNT_BUDGET_MS.
 *
 * audit_events_token_idx indexes each event's whitespace-separated tokens. A search word never holds a
 * space, so an event that has the word as a whole token contains it as a substring: the token
 * matches are a subset of the matches, found exactly (array containment in GIN needs no recheck, so a
 * count over an all-visible page reads no heap at all). The service counts them first; when they reach
 * the cap, the capped total is proven without the trigram index. The trigram index still answers
 * substrings that are not whole tokens and exact totals under the cap.
 *
 * Indexes on audit_events are partitioned indexes: this builds one on every existing monthly partition,
 * and audit_create_month_partition's CREATE TABLE … PARTITION OF gives every new month its own.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    -- The distinct non-empty space-separated tokens of an event's search text (the generated column joins
    -- the fields with single spaces; empty fields would otherwise all index the empty token).
    CREATE FUNCTION audit_search_tokens(search_text text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT array_remove(string_to_array(search_text, ' '), '')
    $$;
    SET LOCAL maintenance_work_mem = '256MB';
    CREATE INDEX audit_events_token_idx ON audit_events USING gin (audit_search_tokens(search_text));
    ANALYZE audit_events;
  `);
}
