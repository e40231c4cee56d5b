import { useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import {
  CreateSavedSearchDocument,
  DeleteSavedSearchDocument,
  RenameSavedSearchDocument,
  SavedSearchesDocument,
  type AuditEventFilter,
  type SavedSearchFieldsFragment,
} from "../../gql/graphql";
import { ConfirmButton, Field, OutcomeLine, useActionOutcome } from "../../kit";

type Props = { current: AuditEventFilter; onOpen(search: SavedSearchFieldsFragment): void };

/** Save the current filters under a name; reopen, rename or delete saved ones (each administrator sees their own). */
export function SavedSearches({ current, onOpen }: Props) {
  const [{ data }, reload] = useQuery({ query: SavedSearchesDocument });
  const [, create] = useMutation(CreateSavedSearchDocument);
  const [, rename] = useMutation(RenameSavedSearchDocument);
  const [, remove] = useMutation(DeleteSavedSearchDocument);
  const [name, setName] = useState("");
  const { outcome, run } = useActionOutcome();
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const refresh = () => reload({ requestPolicy: "network-only" });

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const result = await run(create({ name, filter: current }), `Saved “${name}”.`);
    if (result.error) return;
    setName("");
    refresh();
  };
  const submitRename = async (event: FormEvent) => {
    event.preventDefault();
    if (!renaming) return;
    const result = await run(rename(renaming), `Renamed to “${renaming.name}”.`);
    if (result.error) return;
    setRenaming(null);
    refresh();
  };

  return (
    <section className="saved-searches" aria-labelledby="saved-title">
      <h2 id="saved-title">Saved searches</h2>
      <form onSubmit={(event) => void save(event)} className="inline-form">
        <Field label="Name of this search">
          <input value={name} onChange={(event) => setName(event.target.value)} required maxLength={100} />
        </Field>
        <button type="submit">Save current filters</button>
      </form>
      <OutcomeLine outcome={outcome} className="muted" />
      <ul>
        {(data?.auditSavedSearches ?? []).map((search) => (
          <li key={search.id}>
            {renaming?.id === search.id ? (
              <form onSubmit={(event) => void submitRename(event)} className="inline-form">
                <label>
                  <span className="sr-only">New name for {search.name}</span>
                  <input
                    value={renaming.name}
                    onChange={(event) => setRenaming({ id: search.id, name: event.target.value })}
                    required
                    autoFocus
                  />
                </label>
                <button type="submit">Rename</button>
                <button type="button" onClick={() => setRenaming(null)}>
                  Cancel
                </button>
              </form>
            ) : (
              <>
                <button type="button" className="link" onClick={() => onOpen(search)}>
                  {search.name}
                </button>
                <span className="row-actions">
                  <button
                    type="button"
                    aria-label={`Rename ${search.name}`}
                    onClick={() => setRenaming({ id: search.id, name: search.name })}
                  >
                    Rename
                  </button>
                  <ConfirmButton
                    aria-label={`Delete ${search.name}`}
                    question={`Delete the saved search “${search.name}”?`}
                    onConfirm={() => void run(remove({ id: search.id }), `Deleted “${search.name}”.`).then(refresh)}
                  >
                    Delete
                  </ConfirmButton>
                </span>
              </>
            )}
          </li>
        ))}
      </ul>
      {data && data.auditSavedSearches.length === 0 && <p className="muted empty-state">None yet.</p>}
    </section>
  );
}
