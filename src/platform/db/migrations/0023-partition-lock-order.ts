import type { MigrationContext } from "./context";

/**
 * A month's partitions are created events first, then links. The sequencer's statement reads
 * audit_events, then inserts into audit_chain; creating a month took the link partition's locks first,
 * then waited for audit_events, and the two deadlocked (seen when a month was created while events were
 * being linked). Taking the tables in the sequencer's order leaves nothing to wait for in a circle.
 */
export async function up({ sequelize }: MigrationContext): Promise<void> {
  await sequelize.query(`
    CREATE OR REPLACE FUNCTION audit_create_month_partition(month date) RETURNS boolean LANGUAGE plpgsql AS $$
    DECLARE
      first_day date := date_trunc('month', month)::date;
      -- Months are UTC months whatever the session's TimeZone, so every process draws the same bounds.
      lower_bound timestamptz := first_day::timestamp AT TIME ZONE 'UTC';
      upper_bound timestamptz := (first_day + interval '1 month')::timestamp AT TIME ZONE 'UTC';
      name text := format('audit_events_y%sm%s', to_char(first_day, 'YYYY'), to_char(first_day, 'MM'));
      created boolean := true;
    BEGIN
      IF to_regclass(name) IS NULL THEN
        IF EXISTS (SELECT 1 FROM audit_events_default WHERE occurred_at >= lower_bound AND occurred_at < upper_bound) THEN
          created := false;
        ELSE
          EXECUTE format('CREATE TABLE %I PARTITION OF audit_events FOR VALUES FROM (%L) TO (%L)', name, lower_bound, upper_bound);
        END IF;
      END IF;
      -- Links go to the default partition when theirs cannot be made; the month still works.
      PERFORM audit_create_chain_partition(first_day);
      RETURN created;
    END
    $$;
  `);
}
