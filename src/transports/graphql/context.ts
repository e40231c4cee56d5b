import { BankingLoaders } from "../../finance/banking/banking.loaders";
import type { Logger } from "../../platform/common/logger";
import type { Actor } from "../../platform/security/actor";
import type { Services } from "../../app/services";
import type { RateLimitState } from "../http/rate-limit";
import { TransactionRelationsReadAhead } from "../../finance/transactions/transaction-relations.read-ahead";

/** Everything request-scoped. Built once per HTTP request, WebSocket operation or REST call. */
export class RequestContext {
  private transactionRelationsForActor?: TransactionRelationsReadAhead;
  private bankingLoadersForActor?: BankingLoaders;

  constructor(
    readonly services: Services,
    readonly actor: Actor | null,
    readonly requestId: string,
    readonly logger: Logger,
    /** The request's rate-limit state, for the usage query; null when limiting is off or not HTTP. */
    readonly rateLimit: RateLimitState | null = null,
    /** Whose rate limit the request spends (the HTTP limiter's key), for the GraphQL cost charge; null when not limited. */
    readonly rateLimitKey: string | null = null,
  ) {}

  /** Per-request read-ahead of relations, scoped to the actor's family so a read can never cross families. */
  get transactionRelations(): TransactionRelationsReadAhead {
    if (!this.actor) throw new Error("request-scoped reads need an authenticated actor");
    this.transactionRelationsForActor ??= new TransactionRelationsReadAhead(this.services.repositories, this.actor.familyId);
    return this.transactionRelationsForActor;
  }

  /** Per-request DataLoaders of the banking field resolvers, scoped to the actor's family like the read-ahead. */
  get bankingLoaders(): BankingLoaders {
    if (!this.actor) throw new Error("request-scoped reads need an authenticated actor");
    this.bankingLoadersForActor ??= new BankingLoaders(this.services.repositories, this.actor.familyId);
    return this.bankingLoadersForActor;
  }
}
