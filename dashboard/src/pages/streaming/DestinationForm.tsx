import { useState, type FormEvent } from "react";
import { useMutation } from "urql";
import {
  CreateStreamDestinationDocument,
  UpdateStreamDestinationDocument,
  type StreamDestinationFieldsFragment,
  type StreamDestinationInput,
  type StreamDestinationsQuery,
} from "../../gql/graphql";
import { Field, Problem, problemOf } from "../../kit";

export type DestinationKind = StreamDestinationsQuery["streamDestinationKinds"][number];

/** Labels of the platforms' settings and credentials; a name missing here shows as itself. */
const LABELS: Record<string, string> = {
  webhook: "Webhook",
  splunk: "Splunk HTTP Event Collector",
  elastic: "Elastic (_bulk, ECS)",
  datadog: "Datadog logs",
  sentinel: "Microsoft Sentinel (Logs Ingestion API)",
  qradar: "IBM QRadar (LEEF over syslog)",
  arcsight: "ArcSight (CEF over syslog)",
  token: "HEC token",
  apiKey: "API key",
  clientSecret: "Client secret",
  caCertificate: "CA certificate (PEM, for a private CA)",
  tenantId: "Tenant id",
  clientId: "Client id",
  dcrImmutableId: "Data collection rule immutable id",
  streamName: "Stream name",
  authorityUrl: "Authority URL",
  sourcetype: "Source type",
};

export const kindLabel = (kind: string) => LABELS[kind] ?? kind;

const URL_HINTS: Record<string, string> = {
  webhook: "https://receiver.example.com/hooks",
  splunk: "https://splunk.example.com:8088",
  elastic: "https://elastic.example.com:9200",
  datadog: "https://http-intake.logs.datadoghq.com",
  sentinel: "https://my-dce.westeurope-1.ingest.monitor.azure.com",
};

const patterns = (text: string) =>
  text
    .split(/[,\s]+/)
    .map((part) => part.trim())
    .filter(Boolean);

/**
 * Create or edit a destination of any kind. Credentials are write-only: editing shows which are stored
 * and replaces only those typed in. A created webhook's secret goes to `onCreated`, which shows it once.
 */
export function DestinationForm({
  kinds,
  destination,
  onCreated,
  onDone,
}: {
  kinds: DestinationKind[];
  destination: StreamDestinationFieldsFragment | null;
  onCreated(name: string, secret: string | null): void;
  onDone(message: string | null): void;
}) {
  const [, create] = useMutation(CreateStreamDestinationDocument);
  const [, update] = useMutation(UpdateStreamDestinationDocument);
  const [kindName, setKindName] = useState(destination?.kind ?? kinds[0]?.kind ?? "webhook");
  const [error, setError] = useState<string | null>(null);
  const kind = kinds.find((candidate) => candidate.kind === kindName);
  const stored = (name: string) => destination?.settings.find((setting) => setting.name === name)?.value ?? "";
  const title = destination ? `Edit ${destination.name}` : "New destination";

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    const settings = (kind?.settings ?? [])
      .map(({ name }) => ({ name, value: text(`setting:${name}`) }))
      // On create an empty setting is simply not sent; on edit an empty value removes it.
      .filter((setting) => destination || setting.value);
    const credentials = (kind?.credentials ?? []).map((name) => ({ name, value: text(`credential:${name}`) })).filter((c) => c.value);
    const input: StreamDestinationInput = {
      name: text("name"),
      description: text("description") || null,
      url: text("url"),
      eventTypes: patterns(text("eventTypes")),
      enabled: form.get("enabled") === "on",
      settings,
    };
    if (credentials.length) input.credentials = credentials;
    if (destination) {
      const result = await update({ id: destination.id, input });
      if (result.error) return setError(problemOf(result.error));
      onDone(`${input.name} saved.`);
    } else {
      const result = await create({ input: { ...input, kind: kindName } });
      if (result.error) return setError(problemOf(result.error));
      onCreated(input.name ?? "", result.data?.createStreamDestination.secret ?? null);
      onDone(`${input.name} created.`);
    }
  };

  return (
    <form className="panel-form" onSubmit={(event) => void submit(event)} aria-label={title}>
      <h2>{title}</h2>
      <Field label="Kind">
        <select name="kind" value={kindName} disabled={Boolean(destination)} onChange={(event) => setKindName(event.target.value)}>
          {kinds.map((candidate) => (
            <option key={candidate.kind} value={candidate.kind}>
              {kindLabel(candidate.kind)}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Name">
        <input name="name" required maxLength={100} defaultValue={destination?.name} />
      </Field>
      <Field label="Description">
        <input name="description" maxLength={500} defaultValue={destination?.description ?? ""} />
      </Field>
      <Field label={<>{kind?.syslog ? "Syslog URL (syslog://host:port or syslog+tls://host:port)" : "URL"}</>}>
        <input
          name="url"
          required
          defaultValue={destination?.url}
          placeholder={kind?.syslog ? "syslog+tls://siem.example.com:6514" : URL_HINTS[kindName]}
          spellCheck={false}
        />
      </Field>
      <Field label="Event types (exact types or prefixes such as auth.*; empty: every event)">
        <input name="eventTypes" defaultValue={destination?.eventTypes.join(", ")} spellCheck={false} />
      </Field>
      {kind?.settings.map((setting) =>
        setting.name === "caCertificate" ? (
          <Field key={`${kindName}:${setting.name}`} label={kindLabel(setting.name)}>
            <textarea name={`setting:${setting.name}`} rows={3} defaultValue={stored(setting.name)} spellCheck={false} />
          </Field>
        ) : (
          <Field key={`${kindName}:${setting.name}`} label={`${kindLabel(setting.name)}${setting.required ? "" : " (optional)"}`}>
            <input name={`setting:${setting.name}`} required={setting.required} defaultValue={stored(setting.name)} spellCheck={false} />
          </Field>
        ),
      )}
      {kind?.credentials.map((name) => {
        const kept = destination?.credentialNames.includes(name);
        return (
          <Field key={`${kindName}:${name}`} label={`${kindLabel(name)}${kept ? " (stored; leave empty to keep)" : ""}`}>
            <input name={`credential:${name}`} type="password" autoComplete="off" required={!kept} />
          </Field>
        );
      })}
      {kindName === "webhook" && !destination && (
        <p className="muted">A signing secret (whsec_…) is generated and shown once, after the webhook is created.</p>
      )}
      <label className="check">
        <input name="enabled" type="checkbox" defaultChecked={destination?.enabled ?? true} />
        Enabled
      </label>
      <Problem error={error} />
      <div className="filter-actions">
        <button type="submit" className="primary">
          {destination ? "Save changes" : "Create destination"}
        </button>
        <button type="button" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
