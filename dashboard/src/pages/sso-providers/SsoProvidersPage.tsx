import { useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import { useViewer } from "../../app/session";
import { ConfirmButton, DataTable, Field, Problem, problemOf, useActionOutcome } from "../../kit";
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
    if (result.error) return setError(problemOf(result.error));
    onDone();
  };
  return (
    <form
      className="panel-form"
      onSubmit={(event) => void submit(event)}
      aria-label={provider ? `Edit ${provider.name}` : "New SSO provider"}
    >
      <h2>{provider ? `Edit ${provider.name}` : "New SSO provider"}</h2>
      <Field label="Name">
        <input name="name" required defaultValue={provider?.name} />
      </Field>
      <Field label="Slug (in the URLs)">
        <input name="slug" required defaultValue={provider?.slug} pattern="[a-z0-9-]+" />
      </Field>
      <Field label="Issuer URL">
        <input name="issuer" type="url" required defaultValue={provider?.issuer} />
      </Field>
      <Field label="Client id">
        <input name="clientId" required defaultValue={provider?.clientId} />
      </Field>
      <Field label={<>Client secret {provider ? "(leave empty to keep)" : ""}</>}>
        <input name="clientSecret" type="password" autoComplete="off" required={!provider} />
      </Field>
      <Field label="Scopes">
        <input name="scopes" defaultValue={(provider?.scopes ?? ["openid", "email", "profile"]).join(" ")} />
      </Field>
      <Field label="Allowed e-mail domains (empty: any)">
        <input name="allowedDomains" defaultValue={provider?.allowedDomains.join(", ")} />
      </Field>
      <Field label="Role mappings (one group=role a line)">
        <textarea name="roleMappings" rows={3} defaultValue={provider?.roleMappings.map((m) => `${m.group}=${m.role}`).join("\n")} />
      </Field>
      <Field label="Default role">
        <select name="defaultRole" defaultValue={provider?.defaultRole ?? "member"}>
          {ROLES.map((role) => (
            <option key={role}>{role}</option>
          ))}
        </select>
      </Field>
      <label className="check">
        <input name="jitProvisioning" type="checkbox" defaultChecked={provider?.jitProvisioning ?? true} />
        Create accounts at first sign-in
      </label>
      <Problem error={error} />
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
  const [testLink, setTestLink] = useState<string | null>(null);
  const refresh = () => reload({ requestPolicy: "network-only" });
  const { outcome, run, say } = useActionOutcome(refresh);

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
      {outcome && (
        <p role="status">
          {outcome.text}{" "}
          {testLink && (
            <a href={testLink} target="_blank" rel="noreferrer">
              Open the test sign-in
            </a>
          )}
        </p>
      )}
      <Problem error={error} />
      {editing && (
        <ProviderForm
          provider={editing === "new" ? null : editing}
          onDone={() => {
            setEditing(null);
            refresh();
          }}
        />
      )}
      <DataTable<SsoProviderFieldsFragment>
        label="SSO providers"
        rows={data?.ssoProviders ?? []}
        loaded={Boolean(data)}
        rowKey={(provider) => provider.id}
        empty="No SSO provider yet."
        columns={[
          { header: "Name", cell: (provider) => <span title={`id ${provider.id}`}>{provider.name}</span> },
          { header: "Slug", className: "mono", cell: (provider) => provider.slug },
          { header: "Issuer", className: "mono", cell: (provider) => provider.issuer },
          { header: "Status", cell: (provider) => (provider.enabled ? "enabled" : "disabled") },
          { header: "Updated", cell: (provider) => <Time value={provider.updatedAt} /> },
          {
            header: "Actions",
            when: canWrite,
            className: "row-actions",
            cell: (provider) => (
              <>
                <button type="button" onClick={() => setEditing(provider)} aria-label={`Edit ${provider.name}`}>
                  Edit
                </button>
                {provider.enabled ? (
                  <button
                    type="button"
                    onClick={() => {
                      setTestLink(null);
                      void run(disable({ id: provider.id }), `${provider.name} disabled.`);
                    }}
                    aria-label={`Disable ${provider.name}`}
                  >
                    Disable
                  </button>
                ) : (
                  <button
                    type="button"
                    onClick={() => {
                      setTestLink(null);
                      void run(enable({ id: provider.id }), `${provider.name} enabled.`);
                    }}
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
                    const tested = result.data?.testSsoProvider;
                    setTestLink(tested?.ok ? (tested.loginUrl ?? null) : null);
                    say(
                      tested?.ok
                        ? `Discovery of ${provider.name} succeeded.`
                        : `Test of ${provider.name} failed: ${tested?.error ?? (result.error ? problemOf(result.error) : "")}`,
                    );
                  }}
                >
                  Test
                </button>
                <ConfirmButton
                  className="danger"
                  aria-label={`Delete ${provider.name}`}
                  question={`Delete the SSO provider “${provider.name}”? People can no longer sign in with it.`}
                  onConfirm={() => {
                    setTestLink(null);
                    void run(remove({ id: provider.id }), `${provider.name} deleted.`);
                  }}
                >
                  Delete
                </ConfirmButton>
              </>
            ),
          },
        ]}
      />
    </section>
  );
}
