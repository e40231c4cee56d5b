import { useState, type FormEvent } from "react";
import { useMutation, useQuery } from "urql";
import { useViewer } from "../../app/session";
import { Time } from "../../app/zone";
import {
  BeginTwoFactorEnrolmentDocument,
  ConfirmTwoFactorEnrolmentDocument,
  TwoFactorStatusDocument,
  type BeginTwoFactorEnrolmentMutation,
} from "../../gql/graphql";
import { Field, plural, Problem, problemOf, QrCode } from "../../kit";

type Enrolment = BeginTwoFactorEnrolmentMutation["beginTwoFactorEnrolment"];

/** The secret in groups of four, as authenticator apps print it (the spaces are ignored when typed in). */
function grouped(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, "$1 ");
}

/** Recovery codes the API gave once: copy them, download them as a text file, then they are gone from the page. */
function RecoveryCodes({ codes, email, onDone }: { codes: string[]; email: string; onDone(): void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const text = `Recovery codes for ${email} (finance-gateway). Each signs in once instead of a code from your app.\n\n${codes.join("\n")}\n`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied("Copied to the clipboard.");
    } catch {
      setCopied("The browser refused the clipboard: select the codes and copy them, or download them.");
    }
  };
  return (
    <div className="secret-notice" role="region" aria-label="Recovery codes">
      <h2>Two-factor sign-in is on</h2>
      <p>
        Keep these recovery codes somewhere safe (a password manager, or printed): each signs you in once when your phone is not at hand.
        They are shown only now.
      </p>
      <ul className="recovery-codes" data-testid="recovery-codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ul>
      <div className="form-actions">
        <button type="button" onClick={() => void copy()}>
          Copy codes
        </button>
        <a
          className="button"
          href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}
          download="finance-gateway-recovery-codes.txt"
        >
          Download codes
        </a>
        <button type="button" className="primary" onClick={onDone}>
          I have saved them
        </button>
      </div>
      {copied && <p role="status">{copied}</p>}
    </div>
  );
}

/**
 * The signed-in user's own two-factor sign-in (TOTP): its state; enrolment with a QR code drawn by the
 * server (and the secret as text), confirmed with a first code; the recovery codes, shown once. Turning
 * it off is an administrator's reset (a lost phone), after which the user enrols again.
 */
export function TwoFactorPage() {
  const { viewer } = useViewer();
  const [{ data, error }, reload] = useQuery({ query: TwoFactorStatusDocument, requestPolicy: "network-only" });
  const [begin, beginEnrolment] = useMutation(BeginTwoFactorEnrolmentDocument);
  const [confirming, confirm] = useMutation(ConfirmTwoFactorEnrolmentDocument);
  const [enrolment, setEnrolment] = useState<Enrolment | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const status = data?.twoFactorStatus;

  const start = async () => {
    setProblem(null);
    const result = await beginEnrolment({});
    if (result.error) return setProblem(problemOf(result.error));
    setEnrolment(result.data?.beginTwoFactorEnrolment ?? null);
  };

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const code = String(new FormData(event.currentTarget).get("code") ?? "").replace(/\s/g, "");
    setProblem(null);
    const result = await confirm({ code });
    if (result.error) return setProblem(problemOf(result.error));
    setEnrolment(null);
    setCodes(result.data?.confirmTwoFactorEnrolment ?? []);
    reload({ requestPolicy: "network-only" });
  };

  return (
    <section aria-labelledby="two-factor-title" className="two-factor">
      <h1 id="two-factor-title">Two-factor sign-in</h1>
      <p className="muted">
        With two-factor sign-in on, signing in with your password also asks for a 6-digit code from an authenticator app on your phone (any
        app that reads TOTP QR codes), or one of your recovery codes. Single sign-on is unchanged: your identity provider runs its own
        second factor.
      </p>
      <Problem error={error} />
      {codes && <RecoveryCodes codes={codes} email={viewer.email} onDone={() => setCodes(null)} />}
      {status && !codes && (
        <dl className="facts" aria-label="Your two-factor sign-in">
          <div>
            <dt>State</dt>
            <dd data-testid="two-factor-state">
              {status.enabled ? "On" : status.pending ? "Off (enrolment started, not confirmed)" : "Off"}
            </dd>
          </div>
          {status.enabled && status.enabledAt && (
            <div>
              <dt>Turned on</dt>
              <dd>
                <Time value={status.enabledAt} />
              </dd>
            </div>
          )}
          {status.enabled && (
            <div>
              <dt>Recovery codes left</dt>
              <dd>{plural(status.recoveryCodesLeft, "unused code")}</dd>
            </div>
          )}
        </dl>
      )}
      {status?.enabled && !codes && (
        <p>
          To turn two-factor sign-in off, or to get new recovery codes (a lost or replaced phone), ask an administrator to reset it; you
          then enrol again here. Each recovery code you use is recorded in the audit log.
        </p>
      )}
      {status && !status.enabled && !enrolment && (
        <div className="form-actions">
          <button type="button" className="primary" disabled={begin.fetching} onClick={() => void start()}>
            {status.pending ? "Start again with a new QR code" : "Set up two-factor sign-in"}
          </button>
        </div>
      )}
      {enrolment && (
        <form className="enrolment" onSubmit={(event) => void submit(event)} aria-label="Confirm two-factor sign-in">
          <h2>Scan the QR code</h2>
          <ol>
            <li>Open your authenticator app and add an account by scanning this code.</li>
            <li>Or type the secret into the app (time-based, 6 digits, every 30 seconds).</li>
            <li>Enter the code the app shows to turn two-factor sign-in on.</li>
          </ol>
          <figure className="totp-setup">
            <QrCode text={enrolment.otpauthUri} label="QR code for your authenticator app" />
            <figcaption>
              Secret:{" "}
              <code className="mono" data-testid="totp-secret" data-secret={enrolment.secret}>
                {grouped(enrolment.secret)}
              </code>
            </figcaption>
          </figure>
          <Field label="Code from the app">
            <input name="code" inputMode="numeric" autoComplete="one-time-code" pattern="\s*(\d\s*){6}" required />
          </Field>
          <div className="form-actions">
            <button type="submit" className="primary" disabled={confirming.fetching}>
              Turn on
            </button>
            <button type="button" onClick={() => setEnrolment(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      <Problem error={problem} />
    </section>
  );
}
