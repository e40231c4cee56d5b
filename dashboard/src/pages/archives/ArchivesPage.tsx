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
} from "../../gql/graphql";

type Manifest = {
  rows: number;
  firstSeq: string | null;
  lastSeq: string | null;
  sha256: string;
  firstTimestamp: string | null;
  lastTimestamp: string | null;
};
type Found = AuditArchiveSearchQuery["auditArchiveSearch"];

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
  const [message, setMessage] = useState<string | null>(null);
  const [chosen, setChosen] = useState<string[]>([]);
  const [search, setSearch] = useState("");
  const [eventType, setEventType] = useState("");
  const [found, setFound] = useState<Found | null>(null);
  const [draft, setDraft] = useState<{ databaseDays: string; defaultTier: string; rules: string } | null>(null);

  const refresh = () => reload({ requestPolicy: "network-only" });
  const act = async (promise: Promise<{ error?: { message: string; graphQLErrors: Array<{ message: string }> } }>, done: string) => {
    const result = await promise;
    setMessage(result.error ? (result.error.graphQLErrors[0]?.message ?? result.error.message) : done);
    refresh();
  };
  const find = async (after: string | null) => {
    const filter = { search: search || null, eventTypes: eventType ? [eventType] : null };
    const result = await client
      .query(AuditArchiveSearchDocument, { archiveIds: chosen, filter, after }, { requestPolicy: "network-only" })
      .toPromise();
    if (result.error) setMessage(result.error.graphQLErrors[0]?.message ?? result.error.message);
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
      {message && <p role="status">{message}</p>}
      {error && (
        <p className="error" role="alert">
          {error.graphQLErrors[0]?.message ?? error.message}
        </p>
      )}
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
            <label>
              <span>Days in the database</span>
              <input
                type="number"
                min={0}
                value={settings.databaseDays}
                disabled={!canWrite}
                onChange={(event) => setDraft({ ...settings, databaseDays: event.target.value })}
              />
            </label>
            <label>
              <span>Default tier</span>
              <select
                value={settings.defaultTier}
                disabled={!canWrite}
                onChange={(event) => setDraft({ ...settings, defaultTier: event.target.value })}
              >
                {retention.tiers.map((tier) => (
                  <option key={tier.name}>{tier.name}</option>
                ))}
              </select>
            </label>
            <label className="grow">
              <span>Categories under other tiers</span>
              <input
                value={settings.rules}
                disabled={!canWrite}
                placeholder="auth.*=compliance, user.deleted=extended"
                onChange={(event) => setDraft({ ...settings, rules: event.target.value })}
              />
            </label>
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
                  Moved {month.month}: {month.rows} events
                </li>
              ))}
              {run.kept.map((month) => (
                <li key={month.month}>
                  Kept {month.month}: {month.reason}
                </li>
              ))}
              {run.deleted.map((archive) => (
                <li key={`${archive.month}-${archive.tier}`}>
                  Deleted archive {archive.month} {archive.tier} ({archive.rows} events)
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
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">Search</th>
              <th scope="col">Month</th>
              <th scope="col">Tier</th>
              <th scope="col">State</th>
              <th scope="col">Events</th>
              <th scope="col">Sequences</th>
              <th scope="col">SHA-256</th>
              <th scope="col">Kept until</th>
            </tr>
          </thead>
          <tbody>
            {(data?.auditArchives ?? []).map((archive) => {
              const manifest = archive.manifest as Manifest;
              return (
                <tr key={archive.id}>
                  <td>
                    {archive.state === "stored" && (
                      <input
                        type="checkbox"
                        aria-label={`Search archive ${archive.month} ${archive.tier}`}
                        checked={chosen.includes(archive.id)}
                        onChange={(event) =>
                          setChosen(event.target.checked ? [...chosen, archive.id] : chosen.filter((id) => id !== archive.id))
                        }
                      />
                    )}
                  </td>
                  <td>{archive.month}</td>
                  <td>{archive.tier}</td>
                  <td>{archive.restored ? "restored" : archive.state}</td>
                  <td>{manifest.rows}</td>
                  <td>
                    {manifest.firstSeq ?? "—"}–{manifest.lastSeq ?? "—"}
                  </td>
                  <td>
                    <code title={manifest.sha256}>{manifest.sha256.slice(0, 12)}…</code>
                  </td>
                  <td>
                    <Time value={archive.keepUntil} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
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
          <label className="grow">
            <span>Archive search</span>
            <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} placeholder="words, e-mail, IP…" />
          </label>
          <label>
            <span>Event type</span>
            <input value={eventType} onChange={(event) => setEventType(event.target.value)} placeholder="auth.*" />
          </label>
          <button type="submit" disabled={chosen.length === 0}>
            Search archives
          </button>
        </form>
        {found && (
          <>
            <table className="data-table" aria-label="Archived events">
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Type</th>
                  <th scope="col">User</th>
                  <th scope="col">IP</th>
                  <th scope="col">Sequence</th>
                </tr>
              </thead>
              <tbody>
                {found.nodes.map((event) => (
                  <tr key={event.id}>
                    <td>
                      <Time value={event.timestamp} />
                    </td>
                    <td>{event.eventType}</td>
                    <td>{event.user?.email ?? "—"}</td>
                    <td>{event.ipAddress ?? "—"}</td>
                    <td>{event.seq}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <p className="muted">
              {found.nodes.length} found{found.hasNextPage ? " so far" : ""}.
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
