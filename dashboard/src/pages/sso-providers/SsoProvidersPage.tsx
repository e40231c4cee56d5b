import { useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import { useViewer } from "../../app/session";
import { Time } from "../../app/zone";
import {
  CreateSsoProviderDocument,
  DeleteSsoProviderDocument,
  DisableSsoProviderDocument,
  EnableSsoProviderDocument,
  SsoProvidersDocument,
  TestSsoProviderDocument,
  UpdateSsoProviderDocument,
  type SsoProviderFieldsFragment,
  type SsoProviderInput,
} from "../../gql/graphql";

const ROLES = ["member", "auditor", "admin"];
const list = (text: string) =>
  text
    .split(/[,\s]+/)
    .map((part) => part.trim())
    .filter(Boolean);

function ProviderForm({ provider, onDone }: { provider: SsoProviderFieldsFragment | null; onDone(): void }) {
  const [, create] = useMutation(CreateSsoProviderDocument);
  const [, update] = useMutation(UpdateSsoProviderDocument);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? "").trim();
    const input: SsoProviderInput = {
      name: text("name"),
      slug: text("slug"),
      issuer: text("issuer"),
      clientId: text("clientId"),
      scopes: list(text("scopes")),
      allowedDomains: list(text("allowedDomains")),
      defaultRole: text("defaultRole"),
      jitProvisioning: form.get("jitProvisioning") === "on",
      roleMappings: text("roleMappings")
        .split("\n")
        .map((line) => line.split("="))
        .filter((pair) => pair.length === 2 && pair[0].trim() && pair[1].trim())
        .map(([group, role]) => ({ group: group.trim(), role: role.trim() })),
    };
    if (text("clientSecret")) input.clientSecret = text("clientSecret");
    const result = provider ? await update({ id: provider.id, input }) : await create({ input });
    if (result.error) {
      const details = result.error.graphQLErrors[0]?.extensions?.errors as Array<{ field?: string; message: string }> | undefined;
      setError(details?.map((detail) => detail.message).join("; ") ?? result.error.graphQLErrors[0]?.message ?? result.error.message);
      return;
    }
    onDone();
  };
  return (
    <form
      className="panel-form"
      onSubmit={(event) => void submit(event)}
      aria-label={provider ? `Edit ${provider.name}` : "New SSO provider"}
    >
      <h2>{provider ? `Edit ${provider.name}` : "New SSO provider"}</h2>
      <label>
        <span>Name</span>
        <input name="name" required defaultValue={provider?.name} />
      </label>
      <label>
        <span>Slug (in the URLs)</span>
        <input name="slug" required defaultValue={provider?.slug} pattern="[a-z0-9-]+" />
      </label>
      <label>
        <span>Issuer URL</span>
        <input name="issuer" type="url" required defaultValue={provider?.issuer} />
      </label>
      <label>
        <span>Client id</span>
        <input name="clientId" required defaultValue={provider?.clientId} />
      </label>
      <label>
        <span>Client secret {provider ? "(leave empty to keep)" : ""}</span>
        <input name="clientSecret" type="password" autoComplete="off" required={!provider} />
      </label>
      <label>
        <span>Scopes</span>
        <input name="scopes" defaultValue={(provider?.scopes ?? ["openid", "email", "profile"]).join(" ")} />
      </label>
      <label>
        <span>Allowed e-mail domains (empty: any)</span>
        <input name="allowedDomains" defaultValue={provider?.allowedDomains.join(", ")} />
      </label>
      <label>
        <span>Role mappings (one group=role a line)</span>
        <textarea name="roleMappings" rows={3} defaultValue={provider?.roleMappings.map((m) => `${m.group}=${m.role}`).join("\n")} />
      </label>
      <label>
        <span>Default role</span>
        <select name="defaultRole" defaultValue={provider?.defaultRole ?? "member"}>
          {ROLES.map((role) => (
            <option key={role}>{role}</option>
          ))}
        </select>
      </label>
      <label className="check">
        <input name="jitProvisioning" type="checkbox" defaultChecked={provider?.jitProvisioning ?? true} />
        Create accounts at first sign-in
      </label>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="filter-actions">
        <button type="submit" className="primary">
          {provider ? "Save changes" : "Create provider"}
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The SSO providers: list, create, edit, enable or disable, test (a real discovery), delete. */
export function SsoProvidersPage() {
  const { canWrite } = useViewer();
  const [{ data, error }, reload] = useQuery({ query: SsoProvidersDocument });
  const [, enable] = useMutation(EnableSsoProviderDocument);
  const [, disable] = useMutation(DisableSsoProviderDocument);
  const [, remove] = useMutation(DeleteSsoProviderDocument);
  const [, test] = useMutation(TestSsoProviderDocument);
  const [editing, setEditing] = useState<SsoProviderFieldsFragment | "new" | null>(null);
  const [message, setMessage] = useState<{ text: string; link?: string } | null>(null);
  const refresh = () => reload({ requestPolicy: "network-only" });
  const run = async (promise: Promise<{ error?: { message: string; graphQLErrors: Array<{ message: string }> } }>, done: string) => {
    const result = await promise;
    setMessage({ text: result.error ? (result.error.graphQLErrors[0]?.message ?? result.error.message) : done });
    refresh();
  };

  return (
    <section aria-labelledby="providers-title">
      <div className="page-head">
        <h1 id="providers-title">SSO providers</h1>
        {canWrite && (
          <button type="button" className="primary" onClick={() => setEditing("new")}>
            Add provider
          </button>
        )}
      </div>
      {message && (
        <p role="status">
          {message.text}{" "}
          {message.link && (
            <a href={message.link} target="_blank" rel="noreferrer">
              Open the test sign-in
            </a>
          )}
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error.graphQLErrors[0]?.message ?? error.message}
        </p>
      )}
      {editing && (
        <ProviderForm
          provider={editing === "new" ? null : editing}
          onDone={() => {
            setEditing(null);
            refresh();
          }}
        />
      )}
      <table className="data-table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Slug</th>
            <th scope="col">Issuer</th>
            <th scope="col">Status</th>
            <th scope="col">Updated</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {(data?.ssoProviders ?? []).map((provider) => (
            <tr key={provider.id}>
              <td>{provider.name}</td>
              <td className="mono">{provider.slug}</td>
              <td className="mono">{provider.issuer}</td>
              <td>{provider.enabled ? "enabled" : "disabled"}</td>
              <td>
                <Time value={provider.updatedAt} />
              </td>
              {canWrite && (
                <td className="row-actions">
                  <button type="button" onClick={() => setEditing(provider)} aria-label={`Edit ${provider.name}`}>
                    Edit
                  </button>
                  {provider.enabled ? (
                    <button
                      type="button"
                      onClick={() => void run(disable({ id: provider.id }), `${provider.name} disabled.`)}
                      aria-label={`Disable ${provider.name}`}
                    >
                      Disable
                    </button>
                  ) : (
                    <button
                      type="button"
                      onClick={() => void run(enable({ id: provider.id }), `${provider.name} enabled.`)}
                      aria-label={`Enable ${provider.name}`}
                    >
                      Enable
                    </button>
                  )}
                  <button
                    type="button"
                    aria-label={`Test ${provider.name}`}
                    onClick={async () => {
                      const result = await test({ id: provider.id });
                      const outcome = result.data?.testSsoProvider;
                      setMessage(
                        outcome?.ok
                          ? { text: `Discovery of ${provider.name} succeeded.`, link: outcome.loginUrl ?? undefined }
                          : { text: `Test of ${provider.name} failed: ${outcome?.error ?? result.error?.message}` },
                      );
                    }}
                  >
                    Test
                  </button>
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Delete ${provider.name}`}
                    onClick={() => {
                      if (window.confirm(`Delete the SSO provider “${provider.name}”? People can no longer sign in with it.`)) {
                        void run(remove({ id: provider.id }), `${provider.name} deleted.`);
                      }
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
      {data && data.ssoProviders.length === 0 && <p className="muted">No SSO provider yet.</p>}
    </section>
  );
}
