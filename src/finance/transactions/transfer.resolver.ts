import type { GraphQLResolveInfo } from "graphql";
import { SafeIntResolver } from "graphql-scalars";
import { Arg, Authorized, Ctx, FieldResolver, ID, Info, Int, Query, Resolver, Root } from "type-graphql";
import type { RequestContext } from "../../transports/graphql/context";
import { CurrentActor } from "../../transports/graphql/current-actor";
import type { Actor } from "../../platform/security/actor";
import { CalendarDateScalar } from "../money";
import { absolute, formatMoney, toMinorUnits } from "../money";
import { withSelectedRelations } from "./transaction.resolver";
import type { TransferView } from "./transaction.service";
import { TransferFilterInput, TransferPageType, TransferPayload } from "./transaction.type";

/**
 * Transfers read as upstream's API shows them. The amount is the inflow leg's, in its currency (what
 * arrived); date and notes are the outflow leg's.
 */
@Resolver(() => TransferPayload)
export class TransferResolver {
  @Authorized()
  @Query(() => TransferPageType, { description: "The family's transfers, newest first." })
  async transfers(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Info() info: GraphQLResolveInfo,
    @Arg("filter", () => TransferFilterInput, { nullable: true }) filter?: TransferFilterInput,
    @Arg("page", () => Int, { nullable: true }) page?: number,
    @Arg("perPage", () => Int, { nullable: true, description: "Default 25, at most 100." }) perPage?: number,
  ) {
    const { items, pagination } = await context.services.transactions.transfers(actor, filter ?? {}, page, perPage);
    return { items: await build(context, info, ["items"], items), pagination };
  }

  @Authorized()
  @Query(() => TransferPayload)
  async transfer(
    @Ctx() context: RequestContext,
    @CurrentActor() actor: Actor,
    @Info() info: GraphQLResolveInfo,
    @Arg("id", () => ID) id: string,
  ) {
    const [built] = await build(context, info, [], [await context.services.transactions.transfer(actor, id)]);
    return built;
  }

  @FieldResolver(() => String, { description: "confirmed: a transfer made here needs no matching." })
  status(): string {
    return "confirmed";
  }

  @FieldResolver(() => CalendarDateScalar)
  date(@Root() transfer: TransferPayload): string {
    return transfer.outflow.date;
  }

  @FieldResolver(() => String, { description: 'The amount received, formatted in its currency ("$75.50").' })
  formattedAmount(@Root() transfer: TransferPayload): string {
    return formatMoney(absolute(transfer.inflow.amount), transfer.inflow.currency);
  }

  @FieldResolver(() => SafeIntResolver, { description: "The amount received in minor units." })
  amountCents(@Root() transfer: TransferPayload): number {
    return toMinorUnits(transfer.inflow.amount, transfer.inflow.currency);
  }

  @FieldResolver(() => String)
  currency(@Root() transfer: TransferPayload): string {
    return transfer.inflow.currency;
  }

  @FieldResolver(() => String, { nullable: true })
  notes(@Root() transfer: TransferPayload): string | null {
    return transfer.outflow.notes;
  }

  @FieldResolver(() => Date)
  createdAt(@Root() transfer: TransferPayload): Date {
    return transfer.outflow.createdAt;
  }
}

async function build(context: RequestContext, info: GraphQLResolveInfo, path: string[], views: TransferView[]): Promise<TransferPayload[]> {
  const legs = await withSelectedRelations(
    context,
    info,
    [
      [...path, "outflow"],
      [...path, "inflow"],
    ],
    views.flatMap((view) => [view.outflow, view.inflow]),
  );
  return views.map((view, index) => ({ id: view.id, outflow: legs[2 * index], inflow: legs[2 * index + 1] }));
}
