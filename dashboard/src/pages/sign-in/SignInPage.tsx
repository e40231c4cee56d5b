import { useEffect, useState, type FormEvent } from "react";
import { Navigate, useSearchParams } from "react-router";
import { CONSOLE_ROLES, useSession } from "../../app/session";
import { Field, QrCode } from "../../kit";

type SsoChoice = { slug: string; name: string };

const WRONG_CODE = "That code is not valid, or was used already. Enter the current code from your authenticator app, or a recovery code.";

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
  /** Two-factor sign-in: "code" once the server asked for one; setup carries the QR code of a required enrolment. */
  const [secondFactor, setSecondFactor] = useState<{ setup: { otpauth_uri: string; secret: string } | null } | null>(null);
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);

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
    const sentCode = String(form.get("otp_code") ?? "").trim();
    setBusy(true);
    setError(null);
    try {
      const response = await fetch("/auth/login", {
        method: "POST",
        credentials: "same-origin",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify({ email: form.get("email"), password: form.get("password"), otp_code: sentCode || undefined }),
      });
      const body = (await response.json().catch(() => ({}))) as {
        message?: string;
        mfa_required?: boolean;
        mfa_setup_required?: boolean;
        details?: { otpauth_uri: string; secret: string };
        recovery_codes?: string[];
      };
      if (!response.ok) {
        const askedForCode = Boolean(body.mfa_required || body.mfa_setup_required);
        if (askedForCode) setSecondFactor({ setup: body.details ?? null });
        // The server asks for the code the same way whether none or a wrong one was sent: say which.
        if (askedForCode && !sentCode) setError(null);
        else if (askedForCode) setError(WRONG_CODE);
        else setError(body.message ?? `Sign-in failed (${response.status})`);
        return;
      }
      if (body.recovery_codes) {
        setRecoveryCodes(body.recovery_codes);
        return;
      }
      if (session.status !== "loading") window.location.assign(`/admin${next}`);
    } finally {
      setBusy(false);
    }
  }

  if (recoveryCodes) {
    return (
      <main className="sign-in" aria-labelledby="recovery-title">
        <h1 id="recovery-title">Two-factor sign-in is on</h1>
        <p>Keep these recovery codes somewhere safe: each signs you in once without your phone. They are not shown again.</p>
        <ul className="recovery-codes">
          {recoveryCodes.map((code) => (
            <li key={code}>
              <code>{code}</code>
            </li>
          ))}
        </ul>
        <button type="button" onClick={() => window.location.assign(`/admin${next}`)}>
          Continue
        </button>
      </main>
    );
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
        {secondFactor?.setup && (
          <figure className="totp-setup">
            <QrCode text={secondFactor.setup.otpauth_uri} label="QR code for your authenticator app" />
            <figcaption>
              Scan with an authenticator app (or type <code>{secondFactor.setup.secret}</code>), then enter its code.
            </figcaption>
          </figure>
        )}
        {secondFactor && (
          <>
            <Field label="Authentication code">
              <input
                name="otp_code"
                inputMode={secondFactor.setup ? "numeric" : "text"}
                autoComplete="one-time-code"
                autoCapitalize="off"
                spellCheck={false}
                required
                autoFocus
                aria-describedby="otp-hint"
              />
            </Field>
            <p id="otp-hint" className="muted hint">
              {secondFactor.setup
                ? "Your administrator requires two-factor sign-in: the 6-digit code your authenticator app shows turns it on."
                : "The 6-digit code from your authenticator app, or one of your recovery codes."}
            </p>
          </>
        )}
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
