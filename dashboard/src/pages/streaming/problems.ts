import type { CombinedError } from "urql";

/** What went wrong, as the API said it: each validation message, else the error's message. */
export function problemOf(error: CombinedError): string {
  const first = error.graphQLErrors[0];
  const details = first?.extensions?.errors as string[] | undefined;
  return details?.join("; ") ?? first?.message ?? error.message;
}
