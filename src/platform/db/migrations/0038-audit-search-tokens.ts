import type { MigrationContext } from "./context";

/**
 * Issue 34, item 4: free-text totals without rechecking every match in the table.
 *
 * A search word is matched as a substring of an event's search text, through the trigram index. That
 * index only proposes candidates, so counting a page's capped total for a rare word (account_locked:
 * 2.7 % of events, 10 001 matches to prove the cap) read thousands of heap pages to recheck them and
 * ran out of AUDIT_COUNT_BUDGET_MS.
 *
 * audit_events_token_idx indexes each event's space-separated tokens. A search word never holds a
 * space, so an event that has the word as a whole token contains it as a substring: the token
 * matches are a subset of the matches, found exactly (array containment needs no recheck of the
 * text), and a word's posting list is short to read where the trigram index intersects fourteen
 * posting lists of a month, some in nearly every row. The service counts them first; when they reach
 * the cap, the capped total is proven. The trigram index still answers substrings that are not whole
 * tokens, and exact totals under the cap. Each counted row is still read from the table (a bitmap
 * scan of PostgreSQL 15.20 reads every page it counts, all-visible or not: EXPLAIN BUFFERS of a count
 * of 5 175 rows read 4 384 pages), which is why a free-text total stops at 1000 (audit.service.ts).
 *
 * Indexes on audit_events are partitioned indexes: this builds one on every existing monthly partition,
 * and audit_create_month_partition's CREATE TABLE … PARTITION OF gives every new month its own.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    -- The non-empty space-separated tokens of an event's search text (the generated column joins the
    -- fields with single spaces: empty fields would all index the empty token). GIN keeps each once per row.
    CREATE FUNCTION audit_search_tokens(search_text text) RETURNS text[] LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
      SELECT array_remove(string_to_array(search_text, ' '), '')
    $$;
    -- A GIN build sorts its keys in this memory: with the default 64 MB it spills a month of events in many passes.
    SET LOCAL maintenance_work_mem = '256MB';
    CREATE INDEX audit_events_token_idx ON audit_events USING gin (audit_search_tokens(search_text));
    ANALYZE audit_events;
  `);
}
