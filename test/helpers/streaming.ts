import type { AuditEventType } from "../../src/audit/log/audit.catalogue";
import type { Runtime } from "../../src/app/runtime";
import { apiKeyClient } from "./http";

/**
 * Records `count` audit events of `type` straight through the audit service, `perTransaction` to a
 * transaction, as emitters do; returns their ids in recording order. `details` varies each event.
 */
export async function recordAuditEvents(
  { sequelize, services }: Pick<Runtime, "sequelize" | "services">,
  count: number,
  type: AuditEventType,
  details: (i: number) => { email?: string; error?: string | null; action?: string } = (i) => ({ email: `streamer${i}@example.test` }),
  perTransaction = 100,
): Promise<string[]> {
  const ids: string[] = [];
  for (let start = 0; start < count; start += perTransaction) {
    await sequelize.transaction(async (transaction) => {
      for (let i = start; i < Math.min(count, start + perTransaction); i++) {
        const detail = details(i);
        const event = await services.audit.record(transaction, {
          type,
          user: { id: null, email: detail.email ?? `streamer${i}@example.test` },
          action: detail.action ?? "stream-test",
          error: detail.error ?? null,
        });
        ids.push(event.id);
      }
    });
  }
  return ids;
}

export const DESTINATION_FIELDS = `id kind name url eventTypes enabled disabledReason credentialNames rotationOverlapUntil
  settings { name value }
  health { position head lag paused failing failures nextAttemptAt lastSuccessAt lastFailureAt lastError }`;

export type GqlAnswer = { data?: any; errors?: Array<{ message: string; extensions?: { code?: string; errors?: string[] } }> };

/** GraphQL administration of stream destinations as an administrator's API key sees it. */
export function streamAdmin(baseUrl: string, adminKey: string) {
  const gql = async (query: string, variables?: Record<string, unknown>): Promise<GqlAnswer> =>
    (await apiKeyClient(baseUrl, adminKey).graphql(query, variables)).body as GqlAnswer;
  return {
    gql,
    /** Creates a destination; throws on errors. Returns its id and, for webhooks, the secret. */
    async create(input: Record<string, unknown>): Promise<{ id: string; secret: string | null }> {
      const answer = await gql(
        `mutation ($input: StreamDestinationInput!) { createStreamDestination(input: $input) { secret destination { ${DESTINATION_FIELDS} } } }`,
        { input },
      );
      if (answer.errors) throw new Error(`createStreamDestination: ${JSON.stringify(answer.errors)}`);
      return { id: answer.data.createStreamDestination.destination.id, secret: answer.data.createStreamDestination.secret };
    },
    async destination(id: string): Promise<any> {
      return (await gql(`query ($id: ID!) { streamDestination(id: $id) { ${DESTINATION_FIELDS} } }`, { id })).data.streamDestination;
    },
  };
}
