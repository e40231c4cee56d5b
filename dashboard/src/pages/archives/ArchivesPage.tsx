import { useState } from "react";
import { useClient, useMutation, useQuery } from "urql";
import { useViewer } from "../../app/session";
import { Time } from "../../app/zone";
import {
  AuditArchiveSearchDocument,
  AuditRetentionDocument,
  ReleaseAuditArchiveDocument,
  RestoreAuditArchiveDocument,
  RunAuditRetentionDocument,
  UpdateAuditRetentionDocument,
  type AuditArchiveSearchQuery,
  type AuditRetentionQuery,
} from "../../gql/graphql";
import { DataTable, Field, OutcomeLine, plural, Problem, problemOf, useActionOutcome } from "../../kit";

type Manifest = {
  rows: number;
  firstSeq: string | null;
  lastSeq: string | null;
  sha256: string;
  firstTimestamp: string | null;
  lastTimestamp: string | null;
};
type Found = AuditArchiveSearchQuery["auditArchiveSearch"];
type Archive = AuditRetentionQuery["auditArchives"][number];
type FoundEvent = Found["nodes"][number];

/**
 * Retention: the tiers in force (administrators change them), the latest run, every archive with its
 * manifest, a search inside chosen archives with the log's filters, and restore / release of a month.
 */
export function ArchivesPage() {
  const { canWrite } = useViewer();
  const client = useClient();
  const [{ data, error }, reload] = useQuery({ query: AuditRetentionDocument });
  const [, update] = useMutation(UpdateAuditRetentionDocument);
  const [, runNow] = useMutation(RunAuditRetentionDocument);
  const [, restore] = useMutation(RestoreAuditArchiveDocument);
  const [, release] = useMutation(ReleaseAuditArchiveDocument);
  const [chosen, setChosen] = useState<string[]>([]);
  const [search, setSearch] = useState("");
  const [eventType, setEventType] = useState("");
  const [found, setFound] = useState<Found | null>(null);
  const [draft, setDraft] = useState<{ databaseDays: string; defaultTier: string; rules: string } | null>(null);

  const refresh = () => reload({ requestPolicy: "network-only" });
  const { outcome, run: act, say } = useActionOutcome(refresh);
  const find = async (after: string | null) => {
    const filter = { search: search || null, eventTypes: eventType ? [eventType] : null };
    const result = await client
      .query(AuditArchiveSearchDocument, { archiveIds: chosen, filter, after }, { requestPolicy: "network-only" })
      .toPromise();
    if (result.error) say(problemOf(result.error), true);
    else if (result.data)
      setFound(
        after && found
          ? { ...result.data.auditArchiveSearch, nodes: [...found.nodes, ...result.data.auditArchiveSearch.nodes] }
          : result.data.auditArchiveSearch,
      );
  };

  const retention = data?.auditRetention;
  const run = retention?.lastRun;
  const months = [...new Set((data?.auditArchives ?? []).map((archive) => archive.month))];
  const settings = draft ?? {
    databaseDays: String(retention?.databaseDays ?? ""),
    defaultTier: retention?.defaultTier ?? "standard",
    rules: (retention?.categoryTiers ?? []).map((rule) => `${rule.pattern}=${rule.tier}`).join(", "),
  };

  return (
    <section aria-labelledby="archives-title">
      <h1 id="archives-title">Retention &amp; archives</h1>
      <OutcomeLine outcome={outcome} />
      <Problem error={error} />
      {retention && (
        <section aria-labelledby="tiers-title">
          <h2 id="tiers-title">Tiers</h2>
          <ul>
            {retention.tiers.map((tier) => (
              <li key={tier.name}>
                <strong>{tier.name}</strong>: {tier.meaning}
              </li>
            ))}
          </ul>
          <form
            className="filters compact"
            onSubmit={(event) => {
              event.preventDefault();
              const categoryTiers = settings.rules
                .split(",")
                .map((rule) => rule.trim())
                .filter(Boolean)
                .map((rule) => {
                  const [pattern, tier] = rule.split("=");
                  return { pattern: pattern.trim(), tier: (tier ?? "").trim() };
                });
              void act(
                update({ input: { databaseDays: Number(settings.databaseDays), defaultTier: settings.defaultTier, categoryTiers } }),
                "Retention settings saved.",
              ).then(() => setDraft(null));
            }}
          >
            <Field label="Days in the database">
              <input
                type="number"
                min={0}
                value={settings.databaseDays}
                disabled={!canWrite}
                onChange={(event) => setDraft({ ...settings, databaseDays: event.target.value })}
              />
            </Field>
            <Field label="Default tier">
              <select
                value={settings.defaultTier}
                disabled={!canWrite}
                onChange={(event) => setDraft({ ...settings, defaultTier: event.target.value })}
              >
                {retention.tiers.map((tier) => (
                  <option key={tier.name}>{tier.name}</option>
                ))}
              </select>
            </Field>
            <Field label="Categories under other tiers" className="grow">
              <input
                value={settings.rules}
                disabled={!canWrite}
                placeholder="auth.*=compliance, user.deleted=extended"
                onChange={(event) => setDraft({ ...settings, rules: event.target.value })}
              />
            </Field>
            {canWrite && <button type="submit">Save retention</button>}
          </form>
          <p className="muted">
            Archive storage: {retention.storage}.{" "}
            {retention.changedAt ? (
              <>
                Changed <Time value={retention.changedAt} />.
              </>
            ) : (
              "Configured defaults in force."
            )}
          </p>
        </section>
      )}

      <section aria-labelledby="run-title">
        <h2 id="run-title">Last retention run</h2>
        {run ? (
          <div>
            <p>
              Started <Time value={run.startedAt} />
              {run.finishedAt ? "" : " (not finished)"}
              {run.error ? `: failed: ${run.error}` : ""}
            </p>
            <ul aria-label="Moved">
              {run.moved.map((month) => (
                <li key={month.month}>
                  Moved {month.month}: {plural(month.rows, "event")}
                </li>
              ))}
              {run.kept.map((month) => (
                <li key={month.month}>
                  Kept {month.month}: {month.reason}
                </li>
              ))}
              {run.deleted.map((archive) => (
                <li key={`${archive.month}-${archive.tier}`}>
                  Deleted archive {archive.month} {archive.tier} ({plural(archive.rows, "event")})
                </li>
              ))}
            </ul>
          </div>
        ) : (
          <p className="muted">The retention job has not run yet.</p>
        )}
        {canWrite && (
          <button type="button" onClick={() => void act(runNow({}), "Retention run finished.")}>
            Run retention now
          </button>
        )}
      </section>

      <section aria-labelledby="archive-list-title">
        <h2 id="archive-list-title">Archives</h2>
        <DataTable<Archive>
          label="Archives"
          rows={data?.auditArchives ?? []}
          loaded={Boolean(data)}
          rowKey={(archive) => archive.id}
          empty="No archive yet: months move out of the database once they are older than the days above, at the next retention run."
          columns={[
            {
              header: "Archive",
              cell: (archive) => (
                <span title={`id ${archive.id}`}>
                  {archive.month} {archive.tier}
                </span>
              ),
            },
            {
              header: "Search",
              cell: (archive) =>
                archive.state === "stored" && (
                  <input
                    type="checkbox"
                    aria-label={`Search archive ${archive.month} ${archive.tier}`}
                    checked={chosen.includes(archive.id)}
                    onChange={(event) =>
                      setChosen(event.target.checked ? [...chosen, archive.id] : chosen.filter((id) => id !== archive.id))
                    }
                  />
                ),
            },
            { header: "State", cell: (archive) => (archive.restored ? "restored" : archive.state) },
            { header: "Events", cell: (archive) => (archive.manifest as Manifest).rows },
            {
              header: "Sequences",
              cell: (archive) => {
                const manifest = archive.manifest as Manifest;
                return `${manifest.firstSeq ?? "—"}–${manifest.lastSeq ?? "—"}`;
              },
            },
            {
              header: "SHA-256",
              cell: (archive) => {
                const { sha256 } = archive.manifest as Manifest;
                return <code title={sha256}>{sha256.slice(0, 12)}…</code>;
              },
            },
            { header: "Kept until", cell: (archive) => <Time value={archive.keepUntil} /> },
          ]}
        />
        {canWrite && months.length > 0 && (
          <div className="row-actions">
            {months.map((month) => {
              const restored = (data?.auditArchives ?? []).some((archive) => archive.month === month && archive.restored);
              return restored ? (
                <button key={month} type="button" onClick={() => void act(release({ month }), `${month} released from the database.`)}>
                  Release {month}
                </button>
              ) : (
                <button key={month} type="button" onClick={() => void act(restore({ month }), `${month} restored into the database.`)}>
                  Restore {month}
                </button>
              );
            })}
          </div>
        )}
      </section>

      <section aria-labelledby="archive-search-title">
        <h2 id="archive-search-title">Search inside archives</h2>
        <form
          className="filters compact"
          onSubmit={(event) => {
            event.preventDefault();
            void find(null);
          }}
        >
          <Field label="Archive search" className="grow">
            <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} placeholder="words, e-mail, IP…" />
          </Field>
          <Field label="Event type">
            <input value={eventType} onChange={(event) => setEventType(event.target.value)} placeholder="auth.*" />
          </Field>
          <button type="submit" disabled={chosen.length === 0}>
            Search archives
          </button>
        </form>
        {found && (
          <>
            <DataTable<FoundEvent>
              label="Archived events"
              rows={found.nodes}
              rowKey={(event) => event.id}
              empty="No archived event matches."
              columns={[
                { header: "Time", cell: (event) => <Time value={event.timestamp} /> },
                { header: "Type", cell: (event) => event.eventType },
                { header: "User", cell: (event) => event.user?.email ?? "—" },
                { header: "IP", cell: (event) => event.ipAddress ?? "—" },
                { header: "Sequence", cell: (event) => event.seq },
              ]}
            />
            <p className="muted">
              {plural(found.nodes.length, "event")} found{found.hasNextPage ? " so far" : ""}.
            </p>
            {found.hasNextPage && (
              <button type="button" onClick={() => void find(found.endCursor)}>
                More results
              </button>
            )}
          </>
        )}
      </section>
    </section>
  );
}
