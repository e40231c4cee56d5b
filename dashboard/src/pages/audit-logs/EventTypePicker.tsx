import { useId, useMemo, useState } from "react";
import { useQuery } from "urql";
import { AuditEventTypesDocument } from "../../gql/graphql";

type Choice = { value: string; label: string };

/**
 * Event types picked by typing: matching types (by code or by meaning) and whole categories ("auth.*")
 * show as you type; each pick is a chip that can be removed. Replaces a multi-select that needed Ctrl-click.
 */
export function EventTypePicker({ label, value, onChange }: { label: string; value: string[]; onChange(types: string[]): void }) {
  const [{ data }] = useQuery({ query: AuditEventTypesDocument });
  const [text, setText] = useState("");
  const id = useId();
  const choices = useMemo(() => {
    const types = data?.auditEventTypes ?? [];
    const categories = [...new Set(types.map((type) => type.category))];
    return [
      ...categories.map((category): Choice => ({ value: `${category}.*`, label: `every ${category} event` })),
      ...types.map((type): Choice => ({ value: type.type, label: type.meaning })),
    ];
  }, [data]);
  const labelOf = (chosen: string) => choices.find((choice) => choice.value === chosen)?.label;
  const query = text.trim().toLowerCase();
  const matches = query
    ? choices
        .filter((choice) => !value.includes(choice.value) && `${choice.value} ${choice.label}`.toLowerCase().includes(query))
        .slice(0, 12)
    : [];
  const pick = (chosen: string) => {
    onChange([...value, chosen]);
    setText("");
  };
  return (
    <div className="user-picker event-type-picker">
      <label>
        <span>{label}</span>
        <input
          value={text}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={(event) => {
            if (event.key === "Enter" && matches[0]) {
              event.preventDefault();
              pick(matches[0].value);
            }
          }}
          placeholder="type, e.g. login"
          role="combobox"
          aria-expanded={matches.length > 0}
          aria-controls={`${id}-matches`}
          aria-autocomplete="list"
        />
      </label>
      {matches.length > 0 && (
        <ul id={`${id}-matches`} role="listbox" aria-label="Matching event types" className="suggestions">
          {matches.map((choice) => (
            <li key={choice.value} role="option" aria-selected={false}>
              <button type="button" onClick={() => pick(choice.value)}>
                <span className="mono">{choice.value}</span> <span className="muted">{choice.label}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
      <ul className="chips" aria-label={`Chosen ${label.toLowerCase()}`}>
        {value.map((chosen) => (
          <li key={chosen} title={labelOf(chosen)}>
            <span className="mono">{chosen}</span>
            <button type="button" aria-label={`Remove ${chosen}`} onClick={() => onChange(value.filter((other) => other !== chosen))}>
              ✕
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
