import { useState, type FormEvent } from "react";
import { useQuery } from "urql";
import { ProviderChoicesDocument, UserSuggestionsDocument } from "../../gql/graphql";
import { EventTypePicker } from "./EventTypePicker";
import { Field, problemOf } from "../../kit";
import { RANGE_PRESETS, SEVERITIES, type Filters } from "./filters";

type Props = { filters: Filters; userLabels: Map<string, string>; onApply(filters: Filters, labels: Map<string, string>): void };

const splitList = (text: string) =>
  text
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);

/** A chosen user's chip: named by e-mail (looked up when only the id is known, as from a link), the id on hover. */
function UserChip({ id, label, onRemove }: { id: string; label: string | undefined; onRemove(): void }) {
  const [{ data }] = useQuery({ query: UserSuggestionsDocument, variables: { emailPrefix: id }, pause: label !== undefined });
  const name = label ?? data?.auditUserLookup.find((user) => user.id === id)?.email ?? id;
  return (
    <li title={id}>
      {name}
      <button type="button" aria-label={`Remove ${name}`} onClick={onRemove}>
        ✕
      </button>
    </li>
  );
}

/**
 * Users chosen by e-mail: type its first letters (or paste a user id) and pick from the matches. Auditors
 * find the members of their family, administrators anyone (the server's auditUserLookup decides).
 */
export function UserPicker({
  selected,
  labels,
  onChange,
}: {
  selected: string[];
  labels: Map<string, string>;
  onChange(ids: string[], labels: Map<string, string>): void;
}) {
  const [text, setText] = useState("");
  const typed = text.trim();
  const [{ data, error }] = useQuery({ query: UserSuggestionsDocument, variables: { emailPrefix: typed }, pause: typed.length < 2 });
  const suggestions = typed.length >= 2 ? (data?.auditUserLookup ?? []).filter((user) => !selected.includes(user.id)) : [];
  const none = typed.length >= 2 && !error && data !== undefined && suggestions.length === 0;
  return (
    <div className="user-picker">
      <Field label="Users">
        <input
          type="search"
          value={text}
          onChange={(event) => setText(event.target.value)}
          placeholder="e-mail, or a user id"
          aria-describedby="user-picker-hint"
          role="combobox"
          aria-expanded={suggestions.length > 0}
          aria-controls="user-suggestions"
          aria-autocomplete="list"
        />
      </Field>
      <span id="user-picker-hint" className="sr-only">
        Type the first letters of an e-mail address to see matching users.
      </span>
      {error && typed.length >= 2 && <span className="muted">{problemOf(error)}</span>}
      {none && <span className="muted">No user’s e-mail begins with “{typed}”.</span>}
      {suggestions.length > 0 && (
        <ul id="user-suggestions" role="listbox" aria-label="Matching users" className="suggestions">
          {suggestions.map((user) => (
            <li key={user.id} role="option" aria-selected={false} title={user.id}>
              <button
                type="button"
                onClick={() => {
                  onChange([...selected, user.id], new Map(labels).set(user.id, user.email));
                  setText("");
                }}
              >
                {user.email}
                {user.name ? ` (${user.name})` : ""}
              </button>
            </li>
          ))}
        </ul>
      )}
      <ul className="chips" aria-label="Chosen users">
        {selected.map((id) => (
          <UserChip
            key={id}
            id={id}
            label={labels.get(id)}
            onRemove={() =>
              onChange(
                selected.filter((other) => other !== id),
                labels,
              )
            }
          />
        ))}
      </ul>
    </div>
  );
}

/** The filters of spec 4.1; applying them changes the URL, so back and forward step through searches. */
export function FilterBar({ filters, userLabels, onApply }: Props) {
  const [draft, setDraft] = useState(filters);
  const [labels, setLabels] = useState(userLabels);
  const [{ data: providers }] = useQuery({ query: ProviderChoicesDocument });
  const set = <K extends keyof Filters>(key: K, value: Filters[K]) => setDraft((current) => ({ ...current, [key]: value }));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onApply(draft, labels);
  };
  const custom = draft.range === "" && (draft.from !== "" || draft.to !== "");
  const [rangeChoice, setRangeChoice] = useState(draft.range || (custom ? "custom" : "any"));
  // On a narrow screen the filters fold into a panel (closed until asked for) so the results come first.
  const [open, setOpen] = useState(false);
  const active = activeCount(filters);

  return (
    <div className={`filters-panel${open ? " open" : ""}`}>
      <button type="button" className="filters-toggle" aria-expanded={open} aria-controls="filters-form" onClick={() => setOpen(!open)}>
        Filters{active ? ` (${active} active)` : ""}
      </button>
      <form className="filters" id="filters-form" onSubmit={submit} aria-label="Filters">
        <Field label="Search" className="grow">
          <input
            type="search"
            value={draft.search}
            onChange={(event) => set("search", event.target.value)}
            placeholder="words in any field"
          />
        </Field>
        <UserPicker
          selected={draft.userIds}
          labels={labels}
          onChange={(ids, next) => {
            set("userIds", ids);
            setLabels(next);
          }}
        />
        <Field label="Providers">
          <input
            value={draft.providers.join(", ")}
            onChange={(event) => set("providers", splitList(event.target.value))}
            list="provider-choices"
            placeholder="slug, slug"
          />
          <datalist id="provider-choices">
            {(providers?.ssoProviders ?? []).map((provider) => (
              <option key={provider.slug} value={provider.slug}>
                {provider.name}
              </option>
            ))}
          </datalist>
        </Field>
        <EventTypePicker label="Event types" value={draft.eventTypes} onChange={(eventTypes) => set("eventTypes", eventTypes)} />
        <fieldset className="severities">
          <legend>Severities</legend>
          {SEVERITIES.map((severity) => (
            <label key={severity} className="check">
              <input
                type="checkbox"
                checked={draft.severities.includes(severity)}
                onChange={(event) =>
                  set("severities", event.target.checked ? [...draft.severities, severity] : draft.severities.filter((s) => s !== severity))
                }
              />
              {severity}
            </label>
          ))}
        </fieldset>
        <Field label="Date range">
          <select
            value={rangeChoice}
            onChange={(event) => {
              const choice = event.target.value;
              setRangeChoice(choice);
              setDraft((current) => ({
                ...current,
                range: choice === "any" || choice === "custom" ? "" : choice,
                ...(choice !== "custom" ? { from: "", to: "" } : {}),
              }));
            }}
          >
            <option value="any">Any time</option>
            {RANGE_PRESETS.map((preset) => (
              <option key={preset.value} value={preset.value}>
                {preset.label}
              </option>
            ))}
            <option value="custom">Custom days…</option>
          </select>
        </Field>
        {rangeChoice === "custom" && (
          <>
            <Field label="From (day)">
              <input type="date" value={draft.from.slice(0, 10)} onChange={(event) => set("from", event.target.value)} />
            </Field>
            <Field label="To (day, inclusive)">
              <input type="date" value={draft.to.slice(0, 10)} onChange={(event) => set("to", event.target.value)} />
            </Field>
          </>
        )}
        <Field label="IP address">
          <input
            value={draft.ipAddress}
            onChange={(event) => set("ipAddress", event.target.value)}
            placeholder="10.1.* or 10.1.2.3"
            className="mono"
          />
        </Field>
        <div className="filter-actions">
          <button type="submit" className="primary">
            Apply filters
          </button>
          <button
            type="button"
            onClick={() => {
              const empty = {
                ...draft,
                search: "",
                userIds: [],
                providers: [],
                eventTypes: [],
                severities: [],
                range: "",
                from: "",
                to: "",
                ipAddress: "",
                requestId: "",
                sessionId: "",
              };
              setDraft(empty);
              setRangeChoice("any");
              onApply(empty, labels);
            }}
          >
            Clear
          </button>
        </div>
      </form>
    </div>
  );
}

/** How many kinds of filter are set (a range counts once). */
function activeCount(filters: Filters): number {
  const { search, userIds, providers, eventTypes, severities, range, from, to, ipAddress, requestId, sessionId } = filters;
  return [
    search,
    userIds.length,
    providers.length,
    eventTypes.length,
    severities.length,
    range || from || to,
    ipAddress,
    requestId,
    sessionId,
  ].filter(Boolean).length;
}
