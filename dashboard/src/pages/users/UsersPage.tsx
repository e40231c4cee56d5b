import { useState } from "react";
import { useMutation, useQuery } from "urql";
import { useViewer } from "../../app/session";
import { Time } from "../../app/zone";
import {
  DeleteUserDocument,
  ReactivateUserDocument,
  SetUserRoleDocument,
  SuspendUserDocument,
  UnlockUserDocument,
  UsersDocument,
} from "../../gql/graphql";
import { ConfirmButton, DataTable, Field, OutcomeLine, plural, Problem, useActionOutcome } from "../../kit";

const ROLES = ["member", "auditor", "admin"];
const STATUSES = ["", "active", "suspended", "deleted"];

/** "password", or "sso:<provider id>" as the server records it, in words. */
function signInMethod(method: string | null | undefined): string {
  if (!method) return "";
  return method.startsWith("sso:") ? "single sign-on" : method;
}

/** Whether repeated wrong passwords lock the account now (the server clears lockedUntil when it passes or is lifted). */
function lockedNow(lockedUntil: string | null | undefined): boolean {
  return Boolean(lockedUntil && Date.parse(lockedUntil) > Date.now());
}

/**
 * Users of the instance: search, change a role, suspend or reactivate, delete (with confirmation); each
 * user's state (active, suspended, locked until … after repeated wrong passwords), last sign-in and its
 * method; an administrator unlocks a locked account.
 */
export function UsersPage() {
  const { canWrite, viewer } = useViewer();
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState("");
  const [{ data, error }, reload] = useQuery({ query: UsersDocument, variables: { search: search || null, status: status || null } });
  const [, setRole] = useMutation(SetUserRoleDocument);
  const [, suspend] = useMutation(SuspendUserDocument);
  const [, reactivate] = useMutation(ReactivateUserDocument);
  const [, remove] = useMutation(DeleteUserDocument);
  const [, unlock] = useMutation(UnlockUserDocument);
  const { outcome, run } = useActionOutcome(() => reload({ requestPolicy: "network-only" }));
  type User = NonNullable<typeof data>["users"]["items"][number];

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <div className="filters compact">
        <Field label="Search" className="grow">
          <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} placeholder="e-mail, name or id" />
        </Field>
        <Field label="Status">
          <select value={status} onChange={(event) => setStatus(event.target.value)}>
            {STATUSES.map((choice) => (
              <option key={choice} value={choice}>
                {choice || "active and suspended"}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <OutcomeLine outcome={outcome} />
      <Problem error={error} />
      <DataTable<User>
        label="Users"
        rows={data?.users.items ?? []}
        loaded={Boolean(data)}
        rowKey={(user) => user.id}
        empty={search || status ? "No user matches this search." : "No user yet."}
        columns={[
          { header: "E-mail", cell: (user) => <span title={`id ${user.id}`}>{user.email}</span> },
          { header: "Name", cell: (user) => user.name ?? "—" },
          {
            header: "Role",
            cell: (user) =>
              canWrite && user.status !== "deleted" && user.id !== viewer.id ? (
                <label>
                  <span className="sr-only">Role of {user.email}</span>
                  <select
                    value={user.role}
                    onChange={(event) =>
                      void run(setRole({ id: user.id, role: event.target.value }), `${user.email} is now ${event.target.value}.`)
                    }
                  >
                    {ROLES.map((role) => (
                      <option key={role}>{role}</option>
                    ))}
                  </select>
                </label>
              ) : (
                user.role
              ),
          },
          {
            header: "Status",
            cell: (user) =>
              lockedNow(user.lockedUntil) ? (
                <span className="locked">
                  locked until <Time value={user.lockedUntil!} />
                </span>
              ) : (
                user.status
              ),
          },
          {
            header: "Last sign-in",
            cell: (user) =>
              user.lastSignInAt ? (
                <>
                  <Time value={user.lastSignInAt} /> <span className="muted">{signInMethod(user.lastSignInMethod)}</span>
                </>
              ) : (
                <span className="muted">never</span>
              ),
          },
          { header: "Created", cell: (user) => <Time value={user.createdAt} /> },
          {
            header: "Actions",
            when: canWrite,
            className: "row-actions",
            cell: (user) => (
              <>
                {user.status === "active" && user.id !== viewer.id && (
                  <ConfirmButton
                    reason
                    question={`Suspend ${user.email}? Their sessions end at once. Reason (recorded):`}
                    aria-label={`Suspend ${user.email}`}
                    onConfirm={(reason) => void run(suspend({ id: user.id, reason }), `${user.email} suspended.`)}
                  >
                    Suspend
                  </ConfirmButton>
                )}
                {lockedNow(user.lockedUntil) && (
                  <button
                    type="button"
                    aria-label={`Unlock ${user.email}`}
                    onClick={() => void run(unlock({ id: user.id }), `${user.email} unlocked: they can sign in again.`)}
                  >
                    Unlock
                  </button>
                )}
                {user.status === "suspended" && (
                  <button
                    type="button"
                    aria-label={`Reactivate ${user.email}`}
                    onClick={() => void run(reactivate({ id: user.id }), `${user.email} reactivated.`)}
                  >
                    Reactivate
                  </button>
                )}
                {user.status !== "deleted" && user.id !== viewer.id && (
                  <ConfirmButton
                    className="danger"
                    question={`Delete ${user.email}? This cannot be undone; their audit events are kept.`}
                    aria-label={`Delete ${user.email}`}
                    onConfirm={() => void run(remove({ id: user.id }), `${user.email} deleted.`)}
                  >
                    Delete
                  </ConfirmButton>
                )}
              </>
            ),
          },
        ]}
      />
      {data && data.users.pagination.totalCount > 0 && (
        <p className="muted">
          {plural(data.users.pagination.totalCount, "user")}
          {data.users.pagination.totalPages > 1 ? " (first 50 shown: narrow the search)" : ""}
        </p>
      )}
    </section>
  );
}
