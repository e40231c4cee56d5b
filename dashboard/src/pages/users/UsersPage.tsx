import { useState } from "react";
import { useMutation, useQuery } from "urql";
import { useViewer } from "../../app/session";
import { Time } from "../../app/zone";
import { DeleteUserDocument, ReactivateUserDocument, SetUserRoleDocument, SuspendUserDocument, UsersDocument } from "../../gql/graphql";

const ROLES = ["member", "auditor", "admin"];
const STATUSES = ["", "active", "suspended", "deleted"];

/** Users of the instance: search, change a role, suspend or reactivate, delete (with confirmation). */
export function UsersPage() {
  const { canWrite, viewer } = useViewer();
  const [search, setSearch] = useState("");
  const [status, setStatus] = useState("");
  const [{ data, error }, reload] = useQuery({ query: UsersDocument, variables: { search: search || null, status: status || null } });
  const [, setRole] = useMutation(SetUserRoleDocument);
  const [, suspend] = useMutation(SuspendUserDocument);
  const [, reactivate] = useMutation(ReactivateUserDocument);
  const [, remove] = useMutation(DeleteUserDocument);
  const [message, setMessage] = useState<string | null>(null);
  const run = async (promise: Promise<{ error?: { message: string; graphQLErrors: Array<{ message: string }> } }>, done: string) => {
    const result = await promise;
    setMessage(result.error ? (result.error.graphQLErrors[0]?.message ?? result.error.message) : done);
    reload({ requestPolicy: "network-only" });
  };

  return (
    <section aria-labelledby="users-title">
      <h1 id="users-title">Users</h1>
      <div className="filters compact">
        <label className="grow">
          <span>Search</span>
          <input type="search" value={search} onChange={(event) => setSearch(event.target.value)} placeholder="e-mail, name or id" />
        </label>
        <label>
          <span>Status</span>
          <select value={status} onChange={(event) => setStatus(event.target.value)}>
            {STATUSES.map((choice) => (
              <option key={choice} value={choice}>
                {choice || "active and suspended"}
              </option>
            ))}
          </select>
        </label>
      </div>
      {message && <p role="status">{message}</p>}
      {error && (
        <p className="error" role="alert">
          {error.graphQLErrors[0]?.message ?? error.message}
        </p>
      )}
      <table className="data-table">
        <thead>
          <tr>
            <th scope="col">E-mail</th>
            <th scope="col">Name</th>
            <th scope="col">Role</th>
            <th scope="col">Status</th>
            <th scope="col">Created</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {(data?.users.items ?? []).map((user) => (
            <tr key={user.id}>
              <td>{user.email}</td>
              <td>{user.name ?? "—"}</td>
              <td>
                {canWrite && user.status !== "deleted" && user.id !== viewer.id ? (
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
                )}
              </td>
              <td>{user.status}</td>
              <td>
                <Time value={user.createdAt} />
              </td>
              {canWrite && (
                <td className="row-actions">
                  {user.status === "active" && user.id !== viewer.id && (
                    <button
                      type="button"
                      aria-label={`Suspend ${user.email}`}
                      onClick={() => {
                        const reason = window.prompt(`Suspend ${user.email}? Their sessions end at once. Reason (recorded):`, "");
                        if (reason !== null) void run(suspend({ id: user.id, reason: reason || null }), `${user.email} suspended.`);
                      }}
                    >
                      Suspend
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
                    <button
                      type="button"
                      className="danger"
                      aria-label={`Delete ${user.email}`}
                      onClick={() => {
                        if (window.confirm(`Delete ${user.email}? This cannot be undone; their audit events are kept.`)) {
                          void run(remove({ id: user.id }), `${user.email} deleted.`);
                        }
                      }}
                    >
                      Delete
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {data && (
        <p className="muted">
          {data.users.pagination.totalCount} users{data.users.pagination.totalPages > 1 ? " (first 50 shown: narrow the search)" : ""}
        </p>
      )}
    </section>
  );
}
