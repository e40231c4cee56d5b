import { useEffect, useState, type FormEvent } from "react";
import { Navigate, useSearchParams } from "react-router";
import { CONSOLE_ROLES, useSession } from "../../app/session";
import { Field } from "../../kit";

type SsoChoice = { slug: string; name: string };

/** Only paths of the console come back from `next`, never another site. */
function safeNext(next: string | null): string {
  return next && next.startsWith("/") && !next.startsWith("//") ? next : "/audit-logs";
}

export function SignInPage() {
  const session = useSession();
  const [params] = useSearchParams();
  const next = safeNext(params.get("next"));
  const [providers, setProviders] = useState<SsoChoice[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    document.title = "Sign in · finance-gateway";
    fetch("/auth/sso/providers", { headers: { accept: "application/json" } })
      .then((response) => (response.ok ? response.json() : { providers: [] }))
      .then((body: { providers: SsoChoice[] }) => setProviders(body.providers))
      .catch(() => setProviders([]));
  }, []);

  if (session.status === "signed-in" && CONSOLE_ROLES.includes(session.viewer.role)) return <Navigate to={next} replace />;
  if (session.status === "signed-in") return <Navigate to="/" replace />;

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const response = await fetch("/auth/login", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ email: form.get("email"), password: form.get("password") }),
      });
      if (!response.ok) {
        const body = (await response.json().catch(() => ({}))) as { message?: string };
        setError(body.message ?? `Sign-in failed (${response.status})`);
        return;
      }
      if (session.status !== "loading") window.location.assign(`/admin${next}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in to the admin console</h1>
      <form onSubmit={(event) => void submit(event)} aria-describedby={error ? "sign-in-error" : undefined}>
        <Field label="E-mail">
          <input name="email" type="email" autoComplete="username" required autoFocus />
        </Field>
        <Field label="Password">
          <input name="password" type="password" autoComplete="current-password" required />
        </Field>
        {error && (
          <p id="sign-in-error" className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
      {providers.length > 0 && (
        <section aria-labelledby="sso-title" className="sso-choices">
          <h2 id="sso-title">Or sign in with</h2>
          <ul>
            {providers.map((provider) => (
              <li key={provider.slug}>
                <a
                  className="button"
                  href={`/auth/sso/${encodeURIComponent(provider.slug)}/start?return_to=${encodeURIComponent(`/admin${next}`)}`}
                >
                  {provider.name}
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
    </main>
  );
}
