import { eventually } from "./eventually";
import type { SyncRunRow } from "../../src/finance/banking/bank-connection.repository";
import type { Services } from "../../src/app/services";

/** Test settings for bank sync: the loopback fakes allowed, quick retries and timeouts. */
export const BANK_TEST_ENV = {
  ALLOW_INSECURE_UPSTREAMS: "true",
  // The fakes listen on loopback, which the outbound guard refuses unless told.
  OUTBOUND_ALLOWLIST: "127.0.0.1,::1,localhost",
  ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64"),
  BANK_RETRY_BASE_MS: "20",
  BANK_UPSTREAM_TIMEOUT_MS: "1000",
};

/** Waits until the connection's newest run has finished (completed or failed) and returns it. */
export async function waitForSync(services: Services, connectionId: string, timeoutMs = 20_000): Promise<SyncRunRow> {
  return eventually(
    async () => {
      const [run] = await services.banking.runs(connectionId, 1);
      return (run?.status === "completed" || run?.status === "failed") && run;
    },
    { what: `the sync of ${connectionId} to finish`, timeout: timeoutMs },
  );
}
