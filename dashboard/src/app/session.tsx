import { createContext, useCallback, useContext, useEffect, useState, type ReactNode } from "react";
import { useClient } from "urql";
import { ViewerDocument, type ViewerQuery } from "../gql/graphql";
import { SIGNED_OUT_EVENT } from "./client";

export type Viewer = ViewerQuery["me"];
type SessionState =
  | { status: "loading" }
  | { status: "signed-out" }
  | { status: "signed-in"; viewer: Viewer; canWrite: boolean; reload(): Promise<void>; signOut(): Promise<void> };

const SessionContext = createContext<SessionState>({ status: "loading" });

/** Roles that may open the console; an auditor reads, an administrator also changes things. */
export const CONSOLE_ROLES = ["admin", "auditor"];

export function SessionProvider({ children }: { children: ReactNode }) {
  const client = useClient();
  const [state, setState] = useState<SessionState>({ status: "loading" });

  const signOut = useCallback(async () => {
    const response = await fetch("/auth/logout", { method: "POST", credentials: "same-origin", headers: { accept: "application/json" } });
    const body = response.ok ? ((await response.json()) as { end_session_url?: string }) : {};
    setState({ status: "signed-out" });
    // An SSO session also ends at the identity provider, which sends the browser back to /auth/sso/logged-out.
    if (body.end_session_url) window.location.assign(body.end_session_url);
  }, []);

  const load = useCallback(async () => {
    const result = await client.query(ViewerDocument, {}, { requestPolicy: "network-only" }).toPromise();
    if (result.data) {
      const viewer = result.data.me;
      setState({ status: "signed-in", viewer, canWrite: viewer.role === "admin", reload: load, signOut });
    } else {
      setState({ status: "signed-out" });
    }
  }, [client, signOut]);

  useEffect(() => {
    void load();
    const onSignedOut = () => setState({ status: "signed-out" });
    window.addEventListener(SIGNED_OUT_EVENT, onSignedOut);
    return () => window.removeEventListener(SIGNED_OUT_EVENT, onSignedOut);
  }, [load]);

  return <SessionContext.Provider value={state}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionState {
  return useContext(SessionContext);
}

/** The signed-in viewer (inside the signed-in part of the app). */
export function useViewer() {
  const session = useSession();
  if (session.status !== "signed-in") throw new Error("useViewer outside a signed-in page");
  return session;
}
