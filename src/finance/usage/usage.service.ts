import type { RateLimitState } from "../../transports/http/rate-limit";
import { NotFoundError } from "../../platform/common/errors";
import type { Actor } from "../../platform/security/actor";
import type { ApiKeyService, ApiKeySummary } from "../identity";

export type Usage = {
  authenticationMethod: "api_key" | "access_token" | "session";
  apiKey: ApiKeySummary | null;
  rateLimit: (RateLimitState & { resetAt: Date }) | null;
};

/** What upstream's GET /usage reports: the credential making the request and its rate-limit state. */
export class UsageService {
  constructor(private readonly apiKeys: ApiKeyService) {}

  async usage(actor: Actor, rateLimit: RateLimitState | null, now = new Date()): Promise<Usage> {
    let apiKey: ApiKeySummary | null = null;
    if (actor.credential.kind === "api_key") {
      const id = actor.credential.id;
      apiKey = (await this.apiKeys.listForUser(actor.userId)).find((key) => key.id === id) ?? null;
      // Revoked between authentication and this read: as unknown as any other gone key.
      if (!apiKey) throw new NotFoundError("API key");
    }
    return {
      authenticationMethod: actor.credential.kind,
      apiKey,
      rateLimit: rateLimit && { ...rateLimit, resetAt: new Date(now.getTime() + rateLimit.resetInSeconds * 1000) },
    };
  }
}
