import { eventually } from "./eventually";
import type { Runtime } from "../../src/app/runtime";
import { EVALUATOR_CONSUMER } from "../../src/audit/alerts/alert.evaluator";
import { apiKeyClient } from "./http";
import { type GqlAnswer } from "./streaming";

export const FIRING_FIELDS = `id ruleId ruleName groupKey windowStart firedAt count summary digest
  events { id seq eventType ipAddress user country }
  deliveries { id channelId channelName channelKind status attempts errors { at error } sentAt }`;
export const RULE_FIELDS =
  "id name preset condition eventTypes minSeverity threshold windowSeconds groupBy channelIds enabled cooldownSeconds firingCap";

/** Alerts administration over GraphQL as an administrator's API key sees it; throws on GraphQL errors. */
export function alertAdmin(baseUrl: string, adminKey: string) {
  const gql = async (query: string, variables?: Record<string, unknown>): Promise<GqlAnswer> =>
    (await apiKeyClient(baseUrl, adminKey).graphql(query, variables)).body as GqlAnswer;
  const data = async (query: string, variables?: Record<string, unknown>): Promise<any> => {
    const answer = await gql(query, variables);
    if (answer.errors) throw new Error(JSON.stringify(answer.errors));
    return answer.data;
  };
  const pairs = (record: Record<string, string> = {}) => Object.entries(record).map(([name, value]) => ({ name, value }));
  return {
    gql,
    data,
    async channel(kind: string, name: string, settings: Record<string, string>, credentials?: Record<string, string>) {
      const created = await data(
        `mutation ($input: AlertChannelInput!) { createAlertChannel(input: $input) { secret channel { id kind name credentialNames settings { name value } } } }`,
        { input: { kind, name, settings: pairs(settings), credentials: credentials ? pairs(credentials) : null } },
      );
      return { id: created.createAlertChannel.channel.id as string, secret: created.createAlertChannel.secret as string | null };
    },
    async enablePreset(preset: string, channelIds: string[] = []) {
      return (
        await data(`mutation ($preset: String!, $ids: [ID!]) { enableAlertPreset(preset: $preset, channelIds: $ids) { ${RULE_FIELDS} } }`, {
          preset,
          ids: channelIds,
        })
      ).enableAlertPreset;
    },
    async rule(input: Record<string, unknown>) {
      return (await data(`mutation ($input: AlertRuleInput!) { createAlertRule(input: $input) { ${RULE_FIELDS} } }`, { input }))
        .createAlertRule;
    },
    async firings(ruleId?: string): Promise<any[]> {
      return (await data(`query ($ruleId: ID) { alertFirings(first: 20, ruleId: $ruleId) { ${FIRING_FIELDS} } }`, { ruleId })).alertFirings;
    },
    async test(channelId: string) {
      return (await data(`mutation ($id: ID!) { testAlertChannel(id: $id) { ok latencyMs error } }`, { id: channelId })).testAlertChannel;
    },
  };
}

/** Waits until the alert evaluator has handled every event committed so far. */
export async function evaluatorCaughtUp({ services }: Pick<Runtime, "services">, timeoutMs = 20_000): Promise<void> {
  await services.audit.chainCommitted();
  const head = BigInt(await services.audit.chainHeadSeq());
  await eventually(async () => BigInt((await services.repositories.streamConsumers.get(EVALUATOR_CONSUMER))!.position) >= head, {
    what: "the alert evaluator to reach the chain head",
    timeout: timeoutMs,
  });
}

/** A failed login from `ip` under an address no account has (no lockout involved). */
export async function failedLogin(baseUrl: string, ip: string): Promise<void> {
  const response = await fetch(`${baseUrl}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ email: `nobody-${Math.random().toString(36).slice(2)}@example.test`, password: "wrong password" }),
  });
  if (response.status !== 401) throw new Error(`expected a refused login, got ${response.status}`);
}

export async function login(baseUrl: string, email: string, password: string, ip: string): Promise<void> {
  const response = await fetch(`${baseUrl}/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ email, password }),
  });
  if (response.status !== 200) throw new Error(`expected a login, got ${response.status}`);
}
