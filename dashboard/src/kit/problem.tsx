import { useState } from "react";
import type { CombinedError } from "urql";

/** A validation detail as the API sends it: a sentence, or a field with its sentence. */
type Detail = string | { field?: string; message: string };

/**
 * What went wrong, as the API said it: each validation message (the `errors` extension) joined, else the
 * first GraphQL error's message, else the transport's. The one place the console unpacks an error.
 */
export function problemOf(error: CombinedError): string {
  const first = error.graphQLErrors[0];
  const details = first?.extensions?.errors as Detail[] | undefined;
  if (Array.isArray(details) && details.length)
    return details.map((detail) => (typeof detail === "string" ? detail : detail.message)).join("; ");
  return first?.message ?? error.message;
}

/** An error shown where it happened, announced to screen readers; nothing when there is none. */
export function Problem({ error }: { error: CombinedError | string | null | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {typeof error === "string" ? error : problemOf(error)}
    </p>
  );
}

/** What a mutation's result says: `error` when it failed (with why), else the success text. */
export type Outcome = { error: boolean; text: string };

/**
 * The page's last action and what became of it: `run` awaits a mutation, keeps its problem or `done`,
 * then calls `after` (usually a reload of the page's list).
 */
export function useActionOutcome(after?: () => void) {
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const run = async <Result extends { error?: CombinedError }>(promise: Promise<Result>, done: string): Promise<Result> => {
    const result = await promise;
    setOutcome(result.error ? { error: true, text: problemOf(result.error) } : { error: false, text: done });
    after?.();
    return result;
  };
  const say = (text: string | null, error = false) => setOutcome(text === null ? null : { error, text });
  return { outcome, run, say };
}

/** The outcome of the page's last action: a status line, or an alert when it failed. */
export function OutcomeLine({ outcome, className }: { outcome: Outcome | null; className?: string }) {
  if (!outcome) return null;
  return (
    <p role={outcome.error ? "alert" : "status"} className={[outcome.error ? "error" : "", className ?? ""].join(" ").trim() || undefined}>
      {outcome.text}
    </p>
  );
}
