import { useEffect, useRef } from "react";
import { useQuery } from "urql";
import { Time } from "../../app/zone";
import { AuditEventsDocument } from "../../gql/graphql";
import type { AuditEvent } from "./use-audit-log";

/** Related events are looked for within this distance of the event (request and session ids have no index of their own). */
const RELATED_WINDOW_MS = 86_400_000;

type Props = {
  event: AuditEvent;
  onClose(): void;
  onFilter(change: { userIds?: string[]; ipAddress?: string }): void;
  onOpen(event: AuditEvent): void;
  /** SSO providers' names by id and by slug. */
  providerNames: Map<string, string>;
};

function Related({
  label,
  field,
  value,
  event,
  onOpen,
}: {
  label: string;
  field: "requestId" | "sessionId";
  value: string;
  event: AuditEvent;
  onOpen(event: AuditEvent): void;
}) {
  const at = new Date(event.timestamp).getTime();
  const filter = {
    [field]: value,
    from: new Date(at - RELATED_WINDOW_MS).toISOString(),
    to: new Date(at + RELATED_WINDOW_MS).toISOString(),
  };
  const [{ data, fetching }] = useQuery({ query: AuditEventsDocument, variables: { filter, first: 20 } });
  const others = data?.auditEvents.nodes.filter((other) => other.id !== event.id) ?? [];
  return (
    <section aria-label={label}>
      <h3>{label}</h3>
      {fetching && <p>Loading…</p>}
      {!fetching && others.length === 0 && <p className="muted">None within a day of this event.</p>}
      <ul className="related">
        {others.map((other) => (
          <li key={other.id}>
            <button type="button" className="link" onClick={() => onOpen(other)}>
              <Time value={other.timestamp} /> <span className="mono">{other.eventType}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function show(value: unknown): string {
  if (value === null || value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Every field of one event, its changes as old → new, its neighbours by request and session, and its chain link. */
export function EventDetail({ event, onClose, onFilter, onOpen, providerNames }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [event.id]);
  // A drawer over the table: Escape closes it, as it would any overlay.
  useEffect(() => {
    const onKey = (key: KeyboardEvent) => key.key === "Escape" && onClose();
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onClose]);
  const changes = Object.entries(event.changes ?? {}) as Array<[string, { old?: unknown; new?: unknown } | unknown]>;
  const fields: Array<[string, React.ReactNode]> = [
    ["Time", <Time value={event.timestamp} key="t" />],
    [
      "Type",
      <span className="mono" key="e">
        {event.eventType}
      </span>,
    ],
    [
      "Severity",
      <span className={`severity severity-${event.severity}`} key="s">
        {event.severity}
      </span>,
    ],
    ["User", event.user ? `${event.user.email}${event.user.id ? ` (${event.user.id})` : ""}` : "—"],
    [
      "Provider",
      event.provider
        ? `${providerNames.get(event.provider) ?? event.provider}${providerNames.has(event.provider) ? ` (${event.provider})` : ""}`
        : "—",
    ],
    ["Action", event.action ?? "—"],
    [
      "Resource",
      event.resource ? `${event.resource.type} ${event.resource.id}${event.resource.label ? ` (${event.resource.label})` : ""}` : "—",
    ],
    ["IP address", event.ipAddress ?? "—"],
    ["User agent", event.userAgent ?? "—"],
    ["Session", event.sessionId ?? "—"],
    ["Request", event.requestId ?? "—"],
    ["Error", event.error ?? "—"],
    [
      "Event id",
      <span className="mono" key="i">
        {event.id}
      </span>,
    ],
  ];
  return (
    <aside className="detail" aria-labelledby="detail-title">
      <header>
        <h2 id="detail-title" tabIndex={-1} ref={heading}>
          {event.eventType}
        </h2>
        <button type="button" onClick={onClose} aria-label="Close the event detail">
          ✕
        </button>
      </header>
      <dl className="fields">
        {fields.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <div className="quick-filters">
        {event.user?.id && (
          <button type="button" onClick={() => onFilter({ userIds: [event.user!.id!] })}>
            Filter by this user
          </button>
        )}
        {event.ipAddress && (
          <button type="button" onClick={() => onFilter({ ipAddress: event.ipAddress! })}>
            Filter by this IP
          </button>
        )}
      </div>
      <section aria-label="Changes">
        <h3>Changes</h3>
        {changes.length === 0 ? (
          <p className="muted">No changes recorded.</p>
        ) : (
          <table className="changes">
            <thead>
              <tr>
                <th scope="col">Field</th>
                <th scope="col">Old</th>
                <th scope="col">New</th>
              </tr>
            </thead>
            <tbody>
              {changes.map(([field, change]) => {
                const pair = (change ?? {}) as { old?: unknown; new?: unknown };
                return (
                  <tr key={field}>
                    <th scope="row">{field}</th>
                    <td className="old">{show(pair.old)}</td>
                    <td className="new">→ {show(pair.new)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>
      <section aria-label="Hash chain">
        <h3>Hash chain</h3>
        {event.seq ? (
          <p className="chain-linked">
            Linked at position {event.seq}. Hash <span className="mono">{event.hash?.slice(0, 16)}…</span>, previous{" "}
            <span className="mono">{event.prevHash ? `${event.prevHash.slice(0, 16)}…` : "none (first event)"}</span>.
          </p>
        ) : (
          <p className="chain-pending">Not linked yet: the sequencer links committed events within moments.</p>
        )}
      </section>
      {event.requestId && <Related label="Same request" field="requestId" value={event.requestId} event={event} onOpen={onOpen} />}
      {event.sessionId && <Related label="Same session" field="sessionId" value={event.sessionId} event={event} onOpen={onOpen} />}
    </aside>
  );
}
