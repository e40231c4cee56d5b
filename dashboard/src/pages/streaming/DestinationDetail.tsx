import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { useMutation, useQuery } from "urql";
import { zonedInstant } from "../../app/time";
import { Time, useZone } from "../../app/zone";
import {
  ReplayStreamDestinationDocument,
  StreamDeliveriesDocument,
  type StreamDeliveriesQuery,
  type StreamDestinationFieldsFragment,
} from "../../gql/graphql";

type Delivery = StreamDeliveriesQuery["streamDeliveries"][number];
import { DataTable, Field, Problem, problemOf } from "../../kit";

const PAGE = 50;

function Fact({ term, mono, children }: { term: string; mono?: boolean; children: ReactNode }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd className={mono ? "mono" : undefined}>{children}</dd>
    </div>
  );
}

/** Replay from a chain sequence number or from a time (a wall-clock time in the console's zone). */
function ReplayForm({ destination, onDone }: { destination: StreamDestinationFieldsFragment; onDone(message: string): void }) {
  const [, replay] = useMutation(ReplayStreamDestinationDocument);
  const { zone } = useZone();
  const [from, setFrom] = useState<"sequence" | "time">("sequence");
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget).get("from") ?? "").trim();
    const result = await replay(
      from === "sequence"
        ? { id: destination.id, fromSequence: value }
        : { id: destination.id, fromTime: zonedInstant(value, zone).toISOString() },
    );
    if (result.error) return setError(problemOf(result.error));
    setError(null);
    onDone(`${destination.name} replays from ${from === "sequence" ? `sequence ${value}` : value} (${zone}).`);
  };
  return (
    <form className="replay-form" onSubmit={(event) => void submit(event)} aria-label={`Replay ${destination.name}`}>
      <fieldset>
        <legend>Replay from</legend>
        <label className="check">
          <input type="radio" name="replayFrom" checked={from === "sequence"} onChange={() => setFrom("sequence")} />
          Sequence number
        </label>
        <label className="check">
          <input type="radio" name="replayFrom" checked={from === "time"} onChange={() => setFrom("time")} />
          Time ({zone})
        </label>
      </fieldset>
      {from === "sequence" ? (
        <Field label="First sequence number to deliver again">
          <input key="sequence" name="from" inputMode="numeric" pattern="[0-9]+" required placeholder={destination.health.position} />
        </Field>
      ) : (
        <Field label="Deliver again from">
          <input key="time" name="from" type="datetime-local" step={1} required />
        </Field>
      )}
      <Problem error={error} />
      <button type="submit">Replay</button>
    </form>
  );
}

/** One destination: its health in full, replay (administrators), and its delivery log, newest first. */
export function DestinationDetail({
  destination,
  canWrite,
  onChanged,
}: {
  destination: StreamDestinationFieldsFragment;
  canWrite: boolean;
  onChanged(message: string): void;
}) {
  const [before, setBefore] = useState<string | null>(null);
  const [{ data, error, fetching }, reload] = useQuery({
    query: StreamDeliveriesDocument,
    variables: { destinationId: destination.id, first: PAGE, before },
  });
  const deliveries = data?.streamDeliveries ?? [];
  const { health } = destination;
  // The newest page follows the destination: each time its position or last outcome moves, read it again.
  const progress = `${health.position}|${health.lastSuccessAt}|${health.lastFailureAt}|${health.failures}`;
  const seen = useRef(progress);
  useEffect(() => {
    if (seen.current === progress) return;
    seen.current = progress;
    if (before === null) reload({ requestPolicy: "network-only" });
  }, [progress, before, reload]);
  return (
    <section className="stream-detail" aria-labelledby="stream-detail-title">
      <h2 id="stream-detail-title">{destination.name}</h2>
      <dl className="health">
        <Fact term="Position" mono>
          {health.position}
        </Fact>
        <Fact term="Head" mono>
          {health.head}
        </Fact>
        <Fact term="Lag">{health.lag} events</Fact>
        <Fact term="Failed attempts in a row">{health.failures}</Fact>
        <Fact term="Next attempt">{health.nextAttemptAt ? <Time value={health.nextAttemptAt} /> : "—"}</Fact>
        <Fact term="Last error">{health.lastError ?? "—"}</Fact>
        <Fact term="Event types" mono>
          {destination.eventTypes.length ? destination.eventTypes.join(", ") : "every event"}
        </Fact>
        {destination.settings.map((setting) => (
          <Fact key={setting.name} term={setting.name} mono>
            {setting.value.length > 80 ? `${setting.value.slice(0, 80)}…` : setting.value}
          </Fact>
        ))}
        <Fact term="Credentials">
          {destination.credentialNames.length ? `${destination.credentialNames.join(", ")} (stored, never shown)` : "—"}
        </Fact>
        {destination.rotationOverlapUntil && (
          <Fact term="Previous secret signs until">
            <Time value={destination.rotationOverlapUntil} />
          </Fact>
        )}
      </dl>
      {canWrite && <ReplayForm destination={destination} onDone={onChanged} />}
      <div className="page-head">
        <h3 id="delivery-log-title">Delivery log</h3>
        <button type="button" onClick={() => reload({ requestPolicy: "network-only" })} disabled={fetching}>
          Refresh log
        </button>
      </div>
      <Problem error={error} />
      <DataTable<Delivery>
        label="Delivery log"
        labelledBy="delivery-log-title"
        rows={deliveries}
        loaded={Boolean(data)}
        rowKey={(delivery) => delivery.id}
        empty={`No delivery attempt ${before ? "older than these" : "yet"}.`}
        columns={[
          { header: "Time", cell: (delivery) => <Time value={delivery.attemptedAt} /> },
          {
            header: "Outcome",
            cell: (delivery) => (
              <>
                <span className={`state state-${delivery.outcome}`}>{delivery.outcome}</span>
                {delivery.test ? " (test)" : ""}
              </>
            ),
          },
          { header: "Status", cell: (delivery) => delivery.status ?? "—" },
          { header: "Latency", cell: (delivery) => `${delivery.latencyMs} ms` },
          {
            header: "Events",
            className: "mono",
            cell: (delivery) =>
              delivery.test
                ? "test event"
                : delivery.firstSeq === delivery.lastSeq
                  ? `#${delivery.firstSeq}`
                  : `${delivery.events}: #${delivery.firstSeq}–#${delivery.lastSeq}`,
          },
          { header: "Error", cell: (delivery) => delivery.error ?? "" },
        ]}
      />
      <div className="filter-actions">
        {before && (
          <button type="button" onClick={() => setBefore(null)}>
            Newest
          </button>
        )}
        {deliveries.length === PAGE && (
          <button type="button" onClick={() => setBefore(deliveries[deliveries.length - 1].id)}>
            Older
          </button>
        )}
      </div>
    </section>
  );
}
