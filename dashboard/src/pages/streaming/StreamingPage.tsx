import { useEffect, useState } from "react";
import { useMutation, useQuery, type CombinedError } from "urql";
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
import { problemOf } from "./problems";

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
  const [message, setMessage] = useState<string | null>(null);
  const [secret, setSecret] = useState<{ name: string; value: string } | null>(null);
  const refresh = () => reload({ requestPolicy: "network-only" });
  useEffect(() => {
    const timer = setInterval(() => reload({ requestPolicy: "network-only" }), REFRESH_MS);
    return () => clearInterval(timer);
  }, [reload]);

  const destinations = data?.streamDestinations ?? [];
  const selected = destinations.find((destination) => destination.id === selectedId) ?? null;
  const run = async (promise: Promise<{ error?: CombinedError }>, done: string) => {
    const result = await promise;
    setMessage(result.error ? problemOf(result.error) : done);
    refresh();
  };

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
      {message && <p role="status">{message}</p>}
      {secret && <SecretNotice secret={secret} onDismiss={() => setSecret(null)} />}
      {error && (
        <p className="error" role="alert">
          {problemOf(error)}
        </p>
      )}
      {editing && data && (
        <DestinationForm
          kinds={data.streamDestinationKinds}
          destination={editing === "new" ? null : editing}
          onCreated={(name, value) => value && setSecret({ name, value })}
          onDone={(done) => {
            setEditing(null);
            if (done) setMessage(done);
            refresh();
          }}
        />
      )}
      <table className="data-table">
        <caption className="sr-only">Destinations and their health</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">State</th>
            <th scope="col">Lag</th>
            <th scope="col">Last success</th>
            <th scope="col">Last failure</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {destinations.map((destination) => {
            const state = stateOf(destination);
            const { name, id, health } = destination;
            return (
              <tr key={id} aria-current={id === selectedId ? "true" : undefined}>
                <td>
                  <button
                    type="button"
                    className="link"
                    aria-expanded={id === selectedId}
                    onClick={() => setSelectedId(id === selectedId ? null : id)}
                  >
                    {name}
                  </button>
                  <div className="muted mono">{destination.url}</div>
                </td>
                <td>{kindLabel(destination.kind)}</td>
                <td>
                  <span className={`state state-${state.label}`}>{state.label}</span>
                  {state.detail && <div className="muted">{state.detail}</div>}
                </td>
                <td data-testid="lag">{health.lag}</td>
                <td>{health.lastSuccessAt ? <Time value={health.lastSuccessAt} /> : "—"}</td>
                <td>{health.lastFailureAt ? <Time value={health.lastFailureAt} /> : "—"}</td>
                {canWrite && (
                  <td>
                    <div className="row-actions">
                      <button type="button" aria-label={`Edit ${name}`} onClick={() => setEditing(destination)}>
                        Edit
                      </button>
                      <button
                        type="button"
                        aria-label={`Send a test event to ${name}`}
                        onClick={async () => {
                          const result = await test({ id });
                          const outcome = result.data?.testStreamDestination;
                          setMessage(
                            outcome?.ok
                              ? `Test event delivered to ${name} (${outcome.status ?? "syslog"}, ${outcome.latencyMs} ms).`
                              : `Test event to ${name} failed: ${outcome?.error ?? (result.error ? problemOf(result.error) : "")}`,
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
                        <button
                          type="button"
                          aria-label={`Rotate secret of ${name}`}
                          onClick={async () => {
                            if (!window.confirm(`Rotate the signing secret of “${name}”? The old one keeps signing for 24 hours.`)) return;
                            const result = await rotate({ id });
                            const value = result.data?.rotateStreamWebhookSecret.secret;
                            if (value) setSecret({ name, value });
                            setMessage(result.error ? problemOf(result.error) : `New secret for ${name}; both sign for 24 hours.`);
                            refresh();
                          }}
                        >
                          Rotate secret
                        </button>
                      )}
                      <button
                        type="button"
                        className="danger"
                        aria-label={`Delete ${name}`}
                        onClick={() => {
                          if (
                            window.confirm(`Delete the destination “${name}”? It stops receiving the audit log; its delivery log goes too.`)
                          ) {
                            if (selectedId === id) setSelectedId(null);
                            void run(remove({ id }), `${name} deleted.`);
                          }
                        }}
                      >
                        Delete
                      </button>
                    </div>
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
      {data && destinations.length === 0 && <p className="muted">No destination yet.</p>}
      {selected && (
        <DestinationDetail
          key={selected.id}
          destination={selected}
          canWrite={canWrite}
          onChanged={(done) => {
            setMessage(done);
            refresh();
          }}
        />
      )}
    </section>
  );
}
