import { useEffect, useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import { useViewer } from "../../app/session";
import { Time } from "../../app/zone";
import {
  AlertFiringsDocument,
  AlertsDocument,
  CreateAlertChannelDocument,
  DeleteAlertChannelDocument,
  DeleteAlertRuleDocument,
  EnableAlertPresetDocument,
  TestAlertChannelDocument,
  UpdateAlertRuleDocument,
} from "../../gql/graphql";
import { ALERT_FIRED_EVENT } from "./AlertToasts";

type Outcome = { error?: { message: string; graphQLErrors: Array<{ message: string; extensions?: Record<string, unknown> }> } };

/** Fields of a new channel per kind: settings are shown back later, credentials are write-only. */
const CHANNEL_FIELDS: Record<string, Array<{ name: string; label: string; credential?: boolean; placeholder?: string }>> = {
  email: [
    { name: "host", label: "SMTP host", placeholder: "smtp.example.com" },
    { name: "port", label: "Port", placeholder: "587" },
    { name: "security", label: "Security (none, starttls, tls)", placeholder: "starttls" },
    { name: "from", label: "From", placeholder: "alerts@example.com" },
    { name: "to", label: "To (comma-separated)", placeholder: "security@example.com" },
    { name: "username", label: "Username", credential: true },
    { name: "password", label: "Password", credential: true },
  ],
  chat: [{ name: "url", label: "Incoming webhook URL (Slack, Mattermost, Rocket.Chat)", credential: true }],
  webhook: [{ name: "url", label: "Webhook URL", placeholder: "https://soar.example.com/hooks/alerts" }],
  sms: [
    { name: "baseUrl", label: "Gateway base URL", placeholder: "https://api.twilio.com" },
    { name: "accountSid", label: "Account SID" },
    { name: "from", label: "From number", placeholder: "+15005550006" },
    { name: "to", label: "To numbers (comma-separated)", placeholder: "+447700900123" },
    { name: "authToken", label: "Auth token", credential: true },
  ],
};

function errorText(outcome: Outcome): string | null {
  if (!outcome.error) return null;
  const first = outcome.error.graphQLErrors[0];
  const details = first?.extensions?.errors as string[] | undefined;
  return details?.join("; ") ?? first?.message ?? outcome.error.message;
}

function windowText(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

function ChannelForm({ onDone }: { onDone(message: string): void }) {
  const [kind, setKind] = useState("email");
  const [, create] = useMutation(CreateAlertChannelDocument);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const pairs = (credential: boolean) =>
      CHANNEL_FIELDS[kind]
        .filter((field) => !!field.credential === credential)
        .map((field) => ({ name: field.name, value: String(form.get(field.name) ?? "").trim() }))
        .filter((pair) => pair.value);
    const outcome = await create({
      input: { kind, name: String(form.get("name") ?? ""), settings: pairs(false), credentials: pairs(true) },
    });
    const problem = errorText(outcome);
    setError(problem);
    if (problem) return;
    const secret = outcome.data?.createAlertChannel.secret;
    onDone(
      secret
        ? `Channel added. Its signing secret, shown this once: ${secret}`
        : `Channel ${outcome.data?.createAlertChannel.channel.name} added.`,
    );
  };
  return (
    <form className="panel-form" aria-label="New alert channel" onSubmit={(event) => void submit(event)}>
      <h2>New channel</h2>
      <label>
        <span>Kind</span>
        <select value={kind} onChange={(event) => setKind(event.target.value)}>
          <option value="email">E-mail (SMTP)</option>
          <option value="chat">Chat (incoming webhook)</option>
          <option value="webhook">Webhook (signed)</option>
          <option value="sms">SMS (Twilio-compatible gateway)</option>
        </select>
      </label>
      <label>
        <span>Name</span>
        <input name="name" required maxLength={100} />
      </label>
      {CHANNEL_FIELDS[kind].map((field) => (
        <label key={`${kind}-${field.name}`}>
          <span>{field.label}</span>
          <input name={field.name} type={field.credential ? "password" : "text"} placeholder={field.placeholder} autoComplete="off" />
        </label>
      ))}
      <div>
        <button type="submit">Add channel</button>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

/** Alert rules (the spec's presets in one click), channels with "send test", and the firing history. */
export function AlertsPage() {
  const { canWrite } = useViewer();
  const [{ data, error }, reload] = useQuery({ query: AlertsDocument });
  const [{ data: history }, reloadHistory] = useQuery({ query: AlertFiringsDocument });
  const [, enablePreset] = useMutation(EnableAlertPresetDocument);
  const [, updateRule] = useMutation(UpdateAlertRuleDocument);
  const [, deleteRule] = useMutation(DeleteAlertRuleDocument);
  const [, deleteChannel] = useMutation(DeleteAlertChannelDocument);
  const [, testChannel] = useMutation(TestAlertChannelDocument);
  const [message, setMessage] = useState<string | null>(null);
  const [chosen, setChosen] = useState<string[]>([]);
  const [adding, setAdding] = useState(false);

  useEffect(() => {
    const refresh = () => reloadHistory({ requestPolicy: "network-only" });
    window.addEventListener(ALERT_FIRED_EVENT, refresh);
    return () => window.removeEventListener(ALERT_FIRED_EVENT, refresh);
  }, [reloadHistory]);

  const run = async (promise: Promise<Outcome>, done: string) => {
    const outcome = await promise;
    setMessage(errorText(outcome) ?? done);
    reload({ requestPolicy: "network-only" });
  };
  const channels = data?.alertChannels ?? [];
  const channelName = (id: string) => channels.find((channel) => channel.id === id)?.name ?? "(removed)";

  return (
    <section aria-labelledby="alerts-title">
      <h1 id="alerts-title">Alerts</h1>
      {message && <p role="status">{message}</p>}
      {error && (
        <p className="error" role="alert">
          {error.graphQLErrors[0]?.message ?? error.message}
        </p>
      )}

      <h2>Presets</h2>
      {canWrite && channels.length > 0 && (
        <fieldset className="filters compact">
          <legend>Send preset alerts to</legend>
          {channels.map((channel) => (
            <label key={channel.id}>
              <input
                type="checkbox"
                checked={chosen.includes(channel.id)}
                onChange={(event) =>
                  setChosen((current) => (event.target.checked ? [...current, channel.id] : current.filter((id) => id !== channel.id)))
                }
              />{" "}
              {channel.name}
            </label>
          ))}
        </fieldset>
      )}
      <table className="data-table" aria-label="Alert presets">
        <thead>
          <tr>
            <th scope="col">Preset</th>
            <th scope="col">What it watches</th>
            <th scope="col">State</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {(data?.alertPresets ?? []).map((preset) => (
            <tr key={preset.key}>
              <td>{preset.name}</td>
              <td>{preset.description}</td>
              <td>{preset.enabled ? "enabled" : "off"}</td>
              {canWrite && (
                <td className="row-actions">
                  {!preset.enabled && (
                    <button
                      type="button"
                      aria-label={`Enable ${preset.name}`}
                      onClick={() => void run(enablePreset({ preset: preset.key, channelIds: chosen }), `${preset.name} enabled.`)}
                    >
                      Enable
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Rules</h2>
      <table className="data-table" aria-label="Alert rules">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Condition</th>
            <th scope="col">Channels</th>
            <th scope="col">State</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {(data?.alertRules ?? []).map((rule) => (
            <tr key={rule.id}>
              <td>{rule.name}</td>
              <td>
                {rule.condition === "new_country"
                  ? "a login from a country new for the user"
                  : `≥ ${rule.threshold} × ${rule.eventTypes.join(", ")} (${rule.minSeverity}+) within ${windowText(rule.windowSeconds)}${rule.groupBy ? ` per ${rule.groupBy}` : ""}`}
              </td>
              <td>{rule.channelIds.map(channelName).join(", ") || "history only"}</td>
              <td>{rule.enabled ? "enabled" : "disabled"}</td>
              {canWrite && (
                <td className="row-actions">
                  <button
                    type="button"
                    aria-label={`${rule.enabled ? "Disable" : "Enable"} rule ${rule.name}`}
                    onClick={() =>
                      void run(
                        updateRule({ id: rule.id, input: { enabled: !rule.enabled } }),
                        `${rule.name} ${rule.enabled ? "disabled" : "enabled"}.`,
                      )
                    }
                  >
                    {rule.enabled ? "Disable" : "Enable"}
                  </button>
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Delete rule ${rule.name}`}
                    onClick={() => {
                      if (window.confirm(`Delete the rule ${rule.name}? Its firing history stays.`))
                        void run(deleteRule({ id: rule.id }), `${rule.name} deleted.`);
                    }}
                  >
                    Delete
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Channels</h2>
      {canWrite && !adding && (
        <button type="button" onClick={() => setAdding(true)}>
          New channel
        </button>
      )}
      {canWrite && adding && (
        <ChannelForm
          onDone={(done) => {
            setAdding(false);
            setMessage(done);
            reload({ requestPolicy: "network-only" });
          }}
        />
      )}
      <table className="data-table" aria-label="Alert channels">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col">Settings</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {channels.map((channel) => (
            <tr key={channel.id}>
              <td>{channel.name}</td>
              <td>{channel.kind}</td>
              <td>
                {[
                  ...channel.settings.map((setting) => `${setting.name}=${setting.value}`),
                  ...channel.credentialNames.map((name) => `${name}=••••`),
                ].join(", ")}
              </td>
              {canWrite && (
                <td className="row-actions">
                  <button
                    type="button"
                    aria-label={`Send a test to ${channel.name}`}
                    onClick={() =>
                      void testChannel({ id: channel.id }).then((outcome) => {
                        const result = outcome.data?.testAlertChannel;
                        setMessage(
                          errorText(outcome) ??
                            (result?.ok
                              ? `Test sent to ${channel.name} (${result.latencyMs} ms).`
                              : `Test to ${channel.name} failed: ${result?.error}`),
                        );
                      })
                    }
                  >
                    Send test
                  </button>
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Delete channel ${channel.name}`}
                    onClick={() => {
                      if (window.confirm(`Delete the channel ${channel.name}? Rules stop sending to it.`))
                        void run(deleteChannel({ id: channel.id }), `${channel.name} deleted.`);
                    }}
                  >
                    Delete
                  </button>
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>

      <h2>Firing history</h2>
      <button type="button" onClick={() => reloadHistory({ requestPolicy: "network-only" })}>
        Refresh
      </button>
      <table className="data-table" aria-label="Firing history">
        <thead>
          <tr>
            <th scope="col">Fired</th>
            <th scope="col">Rule</th>
            <th scope="col">Group</th>
            <th scope="col">What happened</th>
            <th scope="col">Sent to</th>
          </tr>
        </thead>
        <tbody>
          {(history?.alertFirings ?? []).map((firing) => (
            <tr key={firing.id}>
              <td>
                <Time value={firing.firedAt} />
              </td>
              <td>{firing.ruleName}</td>
              <td>{firing.groupKey}</td>
              <td>
                {firing.summary}
                <details>
                  <summary>{firing.events.length} triggering event(s)</summary>
                  <ul>
                    {firing.events.map((event) => (
                      <li key={event.id}>
                        {event.eventType} {event.user ?? ""} {event.ipAddress ?? ""} {event.country ?? ""}
                      </li>
                    ))}
                  </ul>
                </details>
              </td>
              <td>
                <ul>
                  {firing.deliveries.map((delivery) => (
                    <li key={delivery.id}>
                      {delivery.channelName}: {delivery.status} after {delivery.attempts} attempt(s)
                      {delivery.errors.length > 0 && ` (last error: ${delivery.errors[delivery.errors.length - 1].error})`}
                    </li>
                  ))}
                  {firing.deliveries.length === 0 && <li>history only</li>}
                </ul>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
