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
  type AlertFiringFieldsFragment,
  type AlertsQuery,
} from "../../gql/graphql";
import { ConfirmButton, DataTable, Field, OutcomeLine, plural, Problem, problemOf, useActionOutcome } from "../../kit";
import { ALERT_FIRED_EVENT } from "./AlertToasts";

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
    const problem = outcome.error ? problemOf(outcome.error) : null;
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
      <Field label="Kind">
        <select value={kind} onChange={(event) => setKind(event.target.value)}>
          <option value="email">E-mail (SMTP)</option>
          <option value="chat">Chat (incoming webhook)</option>
          <option value="webhook">Webhook (signed)</option>
          <option value="sms">SMS (Twilio-compatible gateway)</option>
        </select>
      </Field>
      <Field label="Name">
        <input name="name" required maxLength={100} />
      </Field>
      {CHANNEL_FIELDS[kind].map((field) => (
        <Field key={`${kind}-${field.name}`} label={field.label}>
          <input name={field.name} type={field.credential ? "password" : "text"} placeholder={field.placeholder} autoComplete="off" />
        </Field>
      ))}
      <div>
        <button type="submit">Add channel</button>
      </div>
      <Problem error={error} />
    </form>
  );
}

type Rule = AlertsQuery["alertRules"][number];
type Preset = AlertsQuery["alertPresets"][number];
type Channel = AlertsQuery["alertChannels"][number];

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
  // null until the administrator picks: then the channels the enabled presets already send to.
  const [picked, setPicked] = useState<string[] | null>(null);
  const [adding, setAdding] = useState(false);
  const { outcome, run, say } = useActionOutcome(() => reload({ requestPolicy: "network-only" }));

  useEffect(() => {
    const refresh = () => reloadHistory({ requestPolicy: "network-only" });
    window.addEventListener(ALERT_FIRED_EVENT, refresh);
    return () => window.removeEventListener(ALERT_FIRED_EVENT, refresh);
  }, [reloadHistory]);

  const channels = data?.alertChannels ?? [];
  const rules = data?.alertRules ?? [];
  const limits = data?.alertLimits;
  const channelName = (id: string) => channels.find((channel) => channel.id === id)?.name ?? "(removed)";
  const presetRule = (preset: Preset) => rules.find((rule) => rule.id === preset.ruleId);
  const presetChannels = [...new Set((data?.alertPresets ?? []).flatMap((preset) => presetRule(preset)?.channelIds ?? []))];
  const chosen = picked ?? presetChannels;

  return (
    <section aria-labelledby="alerts-title">
      <h1 id="alerts-title">Alerts</h1>
      <OutcomeLine outcome={outcome} />
      <Problem error={error} />

      <h2>Presets</h2>
      {canWrite && channels.length > 0 && (
        <fieldset className="filters compact">
          <legend>Send preset alerts to</legend>
          {channels.map((channel) => (
            <label key={channel.id} className="check">
              <input
                type="checkbox"
                checked={chosen.includes(channel.id)}
                onChange={(event) => setPicked(event.target.checked ? [...chosen, channel.id] : chosen.filter((id) => id !== channel.id))}
              />
              {channel.name}
            </label>
          ))}
        </fieldset>
      )}
      <DataTable<Preset>
        label="Alert presets"
        rows={data?.alertPresets ?? []}
        loaded={Boolean(data)}
        rowKey={(preset) => preset.key}
        empty="No preset is offered."
        columns={[
          { header: "Preset", cell: (preset) => preset.name },
          { header: "What it watches", cell: (preset) => preset.description },
          { header: "State", cell: (preset) => (preset.enabled ? "enabled" : "off") },
          {
            header: "Sends to",
            cell: (preset) => {
              const rule = presetRule(preset);
              return rule ? rule.channelIds.map(channelName).join(", ") || "history only" : "—";
            },
          },
          {
            header: "Actions",
            when: canWrite,
            className: "row-actions",
            cell: (preset) =>
              !preset.enabled && (
                <button
                  type="button"
                  aria-label={`Enable ${preset.name}`}
                  onClick={() => void run(enablePreset({ preset: preset.key, channelIds: chosen }), `${preset.name} enabled.`)}
                >
                  Enable
                </button>
              ),
          },
        ]}
      />

      <h2>Rules</h2>
      <DataTable<Rule>
        label="Alert rules"
        rows={rules}
        loaded={Boolean(data)}
        rowKey={(rule) => rule.id}
        empty="No rule yet: enable a preset above."
        columns={[
          { header: "Name", cell: (rule) => <span title={`id ${rule.id}`}>{rule.name}</span> },
          {
            header: "Condition",
            cell: (rule) =>
              rule.condition === "new_country"
                ? "a login from a country new for the user"
                : `≥ ${rule.threshold} × ${rule.eventTypes.join(", ")} (${rule.minSeverity}+) within ${windowText(rule.windowSeconds)}${rule.groupBy ? ` per ${rule.groupBy}` : ""}`,
          },
          { header: "Channels", cell: (rule) => rule.channelIds.map(channelName).join(", ") || "history only" },
          {
            header: "Storm limits",
            cell: (rule) => {
              const cooldown = rule.cooldownSeconds ?? limits?.cooldownSeconds ?? 0;
              const cap = rule.firingCap ?? limits?.firingCap;
              return (
                <>
                  {cooldown > 0 ? `cool-down ${windowText(cooldown)}` : "no cool-down"}
                  {rule.cooldownSeconds === null && " (default)"}
                  {cap !== undefined &&
                    `; at most ${plural(cap, "firing")} per ${windowText(limits?.capWindowSeconds ?? 3600)}, then one digest`}
                  {rule.firingCap === null && " (default)"}
                </>
              );
            },
          },
          { header: "State", cell: (rule) => (rule.enabled ? "enabled" : "disabled") },
          {
            header: "Actions",
            when: canWrite,
            className: "row-actions",
            cell: (rule) => (
              <>
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
                <ConfirmButton
                  className="danger"
                  aria-label={`Delete rule ${rule.name}`}
                  question={`Delete the rule ${rule.name}? Its firing history stays.`}
                  onConfirm={() => void run(deleteRule({ id: rule.id }), `${rule.name} deleted.`)}
                >
                  Delete
                </ConfirmButton>
              </>
            ),
          },
        ]}
      />

      <h2>Storm limits</h2>
      {limits && (
        <p aria-label="Storm limits">
          A rule that fires again within its cool-down (default {limits.cooldownSeconds > 0 ? windowText(limits.cooldownSeconds) : "none"})
          or more than its cap (default {plural(limits.firingCap, "firing")}) per {windowText(limits.capWindowSeconds)} is held back; one
          digest (&ldquo;N more since …&rdquo;) follows when the period ends. Each channel sends at most{" "}
          {limits.channelBudgets.map((budget) => `${budget.deliveries} (${budget.kind})`).join(", ")} per{" "}
          {windowText(limits.budgetWindowSeconds)}; deliveries past it are kept as suppressed. Both are recorded in the audit log when they
          begin to bite.
        </p>
      )}

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
            say(done);
            reload({ requestPolicy: "network-only" });
          }}
        />
      )}
      <DataTable<Channel>
        label="Alert channels"
        rows={channels}
        loaded={Boolean(data)}
        rowKey={(channel) => channel.id}
        empty="No channel yet: alerts are kept in the history only."
        columns={[
          { header: "Name", cell: (channel) => <span title={`id ${channel.id}`}>{channel.name}</span> },
          { header: "Kind", cell: (channel) => channel.kind },
          {
            header: "Settings",
            cell: (channel) =>
              [
                ...channel.settings.map((setting) => `${setting.name}=${setting.value}`),
                ...channel.credentialNames.map((name) => `${name}=••••`),
              ].join(", "),
          },
          {
            header: "Actions",
            when: canWrite,
            className: "row-actions",
            cell: (channel) => (
              <>
                <button
                  type="button"
                  aria-label={`Send test to ${channel.name}`}
                  onClick={() =>
                    void testChannel({ id: channel.id }).then((tested) => {
                      const result = tested.data?.testAlertChannel;
                      if (tested.error) return say(problemOf(tested.error), true);
                      say(
                        result?.ok
                          ? `Test sent to ${channel.name} (${result.latencyMs} ms).`
                          : `Test to ${channel.name} failed: ${result?.error}`,
                      );
                    })
                  }
                >
                  Send test
                </button>
                <ConfirmButton
                  className="danger"
                  aria-label={`Delete channel ${channel.name}`}
                  question={`Delete the channel ${channel.name}? Rules stop sending to it.`}
                  onConfirm={() => void run(deleteChannel({ id: channel.id }), `${channel.name} deleted.`)}
                >
                  Delete
                </ConfirmButton>
              </>
            ),
          },
        ]}
      />

      <h2>Firing history</h2>
      <button type="button" onClick={() => reloadHistory({ requestPolicy: "network-only" })}>
        Refresh
      </button>
      <DataTable<AlertFiringFieldsFragment>
        label="Firing history"
        rows={history?.alertFirings ?? []}
        loaded={Boolean(history)}
        rowKey={(firing) => firing.id}
        empty="No alert has fired yet."
        columns={[
          { header: "Fired", cell: (firing) => <Time value={firing.firedAt} /> },
          { header: "Rule", cell: (firing) => (firing.digest ? `${firing.ruleName} (digest)` : firing.ruleName) },
          { header: "Group", cell: (firing) => firing.groupKey },
          {
            header: "What happened",
            cell: (firing) => (
              <>
                {firing.summary}
                <details>
                  <summary>{plural(firing.events.length, "triggering event")}</summary>
                  <ul>
                    {firing.events.map((event) => (
                      <li key={event.id}>
                        {event.eventType} {event.user ?? ""} {event.ipAddress ?? ""} {event.country ?? ""}
                      </li>
                    ))}
                  </ul>
                </details>
              </>
            ),
          },
          {
            header: "Sent to",
            cell: (firing) => (
              <ul>
                {firing.deliveries.map((delivery) => (
                  <li key={delivery.id}>
                    {delivery.channelName}: {delivery.status} after {plural(delivery.attempts, "attempt")}
                    {delivery.errors.length > 0 && ` (last error: ${delivery.errors[delivery.errors.length - 1].error})`}
                  </li>
                ))}
                {firing.deliveries.length === 0 && <li>history only</li>}
              </ul>
            ),
          },
        ]}
      />
    </section>
  );
}
