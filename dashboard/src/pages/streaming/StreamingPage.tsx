import { useEffect, useState } from "react";
import { useMutation, useQuery } from "urql";
import { useViewer } from "../../app/session";
import { Time } from "../../app/zone";
import {
  DeleteStreamDestinationDocument,
  PauseStreamDestinationDocument,
  ResumeStreamDestinationDocument,
  RotateStreamWebhookSecretDocument,
  StreamDestinationsDocument,
  TestStreamDestinationDocument,
  type StreamDestinationFieldsFragment,
} from "../../gql/graphql";
import { DestinationDetail } from "./DestinationDetail";
import { DestinationForm, kindLabel } from "./DestinationForm";
import { ConfirmButton, DataTable, OutcomeLine, Problem, problemOf, useActionOutcome } from "../../kit";

/** Health and lag change by themselves (deliveries, retries): the list is read again this often. */
const REFRESH_MS = 5000;

type Destination = StreamDestinationFieldsFragment;

/** One word for where a destination stands, most serious first. */
function stateOf(destination: Destination): { label: string; detail: string | null } {
  if (!destination.enabled) return { label: "disabled", detail: destination.disabledReason };
  if (destination.health.paused) return { label: "paused", detail: null };
  if (destination.health.failing) return { label: "failing", detail: destination.health.lastError };
  if (destination.health.failures > 0) return { label: "retrying", detail: destination.health.lastError };
  return { label: "active", detail: null };
}

/** A secret the API gave once: shown until dismissed, then gone from the page for good. */
function SecretNotice({ secret, onDismiss }: { secret: { name: string; value: string }; onDismiss(): void }) {
  return (
    <div className="secret-notice" role="region" aria-label="New signing secret">
      <p>
        The signing secret of <strong>{secret.name}</strong>. Copy it to the receiver now: it is never shown again.
      </p>
      <code className="mono" data-testid="signing-secret">
        {secret.value}
      </code>
      <button type="button" onClick={onDismiss}>
        I have copied it
      </button>
    </div>
  );
}

/**
 * Audit streaming: webhooks and SIEM destinations with their health; administrators create, edit, test,
 * pause and resume, replay, rotate a webhook's secret and delete; auditors read.
 */
export function StreamingPage() {
  const { canWrite } = useViewer();
  const [{ data, error }, reload] = useQuery({ query: StreamDestinationsDocument });
  const [, pause] = useMutation(PauseStreamDestinationDocument);
  const [, resume] = useMutation(ResumeStreamDestinationDocument);
  const [, remove] = useMutation(DeleteStreamDestinationDocument);
  const [, rotate] = useMutation(RotateStreamWebhookSecretDocument);
  const [, test] = useMutation(TestStreamDestinationDocument);
  const [editing, setEditing] = useState<Destination | "new" | null>(null);
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const refresh = () => reload({ requestPolicy: "network-only" });
  useEffect(() => {
    const timer = setInterval(() => reload({ requestPolicy: "network-only" }), REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);

  const destinations = data?.streamDestinations ?? [];
  const selected = destinations.find((destination) => destination.id === selectedId) ?? null;
  const { outcome, run, say } = useActionOutcome(refresh);

  return (
    <section aria-labelledby="streaming-title">
      <div className="page-head">
        <h1 id="streaming-title">Audit streaming</h1>
        {canWrite && (
          <button type="button" className="primary" onClick={() => setEditing("new")}>
            Add destination
          </button>
        )}
      </div>
      <p className="muted">
        Webhooks and SIEMs receive the audit log as it is committed, in chain order, at least once. Lag is the number of events recorded but
        not yet delivered.
      </p>
      <OutcomeLine outcome={outcome} />
      {secret && <SecretNotice secret={secret} onDismiss={() => setSecret(null)} />}
      <Problem error={error} />
      {editing && data && (
        <DestinationForm
          kinds={data.streamDestinationKinds}
          destination={editing === "new" ? null : editing}
          onCreated={(name, value) => value && setSecret({ name, value })}
          onDone={(done) => {
            setEditing(null);
            if (done) say(done);
            refresh();
          }}
        />
      )}
      <DataTable<Destination>
        label="Destinations and their health"
        rows={destinations}
        loaded={Boolean(data)}
        rowKey={(destination) => destination.id}
        rowProps={(destination) => ({ "aria-current": destination.id === selectedId ? "true" : undefined })}
        empty="No destination yet."
        columns={[
          {
            header: "Name",
            cell: ({ id, name, url }) => (
              <>
                <button
                  type="button"
                  className="link"
                  title={`id ${id}`}
                  aria-expanded={id === selectedId}
                  onClick={() => setSelectedId(id === selectedId ? null : id)}
                >
                  {name}
                </button>
                <div className="muted mono cell-url">{url}</div>
              </>
            ),
          },
          { header: "Kind", cell: (destination) => kindLabel(destination.kind) },
          {
            header: "State",
            cell: (destination) => {
              const state = stateOf(destination);
              return (
                <>
                  <span className={`state state-${state.label}`}>{state.label}</span>
                  {state.detail && <div className="muted">{state.detail}</div>}
                </>
              );
            },
          },
          { header: "Lag", cell: (destination) => <span data-testid="lag">{destination.health.lag}</span> },
          { header: "Last success", cell: ({ health }) => (health.lastSuccessAt ? <Time value={health.lastSuccessAt} /> : "—") },
          { header: "Last failure", cell: ({ health }) => (health.lastFailureAt ? <Time value={health.lastFailureAt} /> : "—") },
          {
            header: "Actions",
            when: canWrite,
            cell: (destination) => {
              const { id, name, health } = destination;
              return (
                <div className="row-actions">
                  <button type="button" aria-label={`Edit ${name}`} onClick={() => setEditing(destination)}>
                    Edit
                  </button>
                  <button
                    type="button"
                    aria-label={`Send a test event to ${name}`}
                    onClick={async () => {
                      const result = await test({ id });
                      const tested = result.data?.testStreamDestination;
                      say(
                        tested?.ok
                          ? `Test event delivered to ${name} (${tested.status ?? "syslog"}, ${tested.latencyMs} ms).`
                          : `Test event to ${name} failed: ${tested?.error ?? (result.error ? problemOf(result.error) : "")}`,
                      );
                      refresh();
                    }}
                  >
                    Test
                  </button>
                  {health.paused ? (
                    <button type="button" aria-label={`Resume ${name}`} onClick={() => void run(resume({ id }), `${name} resumed.`)}>
                      Resume
                    </button>
                  ) : (
                    <button type="button" aria-label={`Pause ${name}`} onClick={() => void run(pause({ id }), `${name} paused.`)}>
                      Pause
                    </button>
                  )}
                  {health.failing && !health.paused && (
                    <button
                      type="button"
                      aria-label={`Retry now for ${name}`}
                      onClick={() => void run(resume({ id }), `${name} retries now.`)}
                    >
                      Retry now
                    </button>
                  )}
                  {destination.kind === "webhook" && (
                    <ConfirmButton
                      aria-label={`Rotate secret of ${name}`}
                      question={`Rotate the signing secret of “${name}”? The old one keeps signing for 24 hours.`}
                      onConfirm={async () => {
                        const result = await run(rotate({ id }), `New secret for ${name}; both sign for 24 hours.`);
                        const value = result.data?.rotateStreamWebhookSecret.secret;
                        if (value) setSecret({ name, value });
                      }}
                    >
                      Rotate secret
                    </ConfirmButton>
                  )}
                  <ConfirmButton
                    className="danger"
                    aria-label={`Delete ${name}`}
                    question={`Delete the destination “${name}”? It stops receiving the audit log; its delivery log goes too.`}
                    onConfirm={() => {
                      if (selectedId === id) setSelectedId(null);
                      void run(remove({ id }), `${name} deleted.`);
                    }}
                  >
                    Delete
                  </ConfirmButton>
                </div>
              );
            },
          },
        ]}
      />
      {selected && (
        <DestinationDetail
          key={selected.id}
          destination={selected}
          canWrite={canWrite}
          onChanged={(done) => {
            say(done);
            refresh();
          }}
        />
      )}
    </section>
  );
}
