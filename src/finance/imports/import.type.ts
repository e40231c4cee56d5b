import { GraphQLJSONObject } from "graphql-scalars";
import { Field, ID, InputType, Int, ObjectType } from "type-graphql";
import { PageMetaType } from "../planning";

@ObjectType("ImportStatusDetail", { simpleResolvers: true })
export class ImportStatusDetailType {
  @Field() uploaded!: boolean;
  @Field() configured!: boolean;
  @Field({ description: "complete or failed: nothing more will happen to it." }) terminal!: boolean;
  @Field({ description: "No row has a problem." }) cleaned!: boolean;
  @Field({ description: "Pending, with rows, none with a problem." }) publishable!: boolean;
  @Field({ description: "Always false: published imports are not reverted yet." }) revertable!: boolean;
}

@ObjectType("ImportConfiguration", { simpleResolvers: true })
export class ImportConfigurationType {
  @Field(() => String, { nullable: true }) dateColLabel!: string | null;
  @Field(() => String, { nullable: true }) amountColLabel!: string | null;
  @Field(() => String, { nullable: true }) nameColLabel!: string | null;
  @Field(() => String, { nullable: true }) categoryColLabel!: string | null;
  @Field(() => String, { nullable: true }) tagsColLabel!: string | null;
  @Field(() => String, { nullable: true }) notesColLabel!: string | null;
  @Field(() => String, { nullable: true }) accountColLabel!: string | null;
  @Field(() => String, { nullable: true }) currencyColLabel!: string | null;
  @Field(() => String, { nullable: true }) qtyColLabel!: string | null;
  @Field(() => String, { nullable: true }) tickerColLabel!: string | null;
  @Field(() => String, { nullable: true }) priceColLabel!: string | null;
  @Field(() => String, { nullable: true }) entityTypeColLabel!: string | null;
  @Field(() => String, { nullable: true }) exchangeOperatingMicColLabel!: string | null;
  @Field(() => String, { nullable: true, description: "A transaction import's merchant column (ours; upstream's has none)." })
  merchantColLabel!: string | null;
  @Field(() => String, { nullable: true, description: "As given, or as detected from the file." }) dateFormat!: string | null;
  @Field(() => String, { nullable: true, description: "As given, or as detected from the file." }) numberFormat!: string | null;
  @Field() signageConvention!: string;
}

@ObjectType("ImportStats", { simpleResolvers: true })
export class ImportStatsType {
  @Field(() => Int) rowsCount!: number;
  @Field(() => Int) validRowsCount!: number;
  @Field(() => Int) invalidRowsCount!: number;
  @Field(() => Int, { description: "Always 0: accounts, categories and tags are matched by name, not mapped." }) mappingsCount!: number;
  @Field(() => Int, { description: "Always 0." }) unassignedMappingsCount!: number;
  @Field(() => Int, { nullable: true, description: "Transactions the publish wrote." }) importedCount!: number | null;
  @Field(() => Int, { nullable: true, description: "Rows the publish found already imported." }) duplicateCount!: number | null;
}

@ObjectType("Import", { simpleResolvers: true })
export class ImportType {
  @Field(() => ID) id!: string;
  @Field() type!: string;
  @Field({ description: "pending, importing, complete or failed." }) status!: string;
  @Field() createdAt!: Date;
  @Field() updatedAt!: Date;
  @Field(() => ID, { nullable: true }) accountId!: string | null;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => String, { nullable: true }) fileName!: string | null;
  @Field(() => Int) byteSize!: number;
  @Field(() => Int) rowsCount!: number;
  @Field(() => Date, { nullable: true }) publishedAt!: Date | null;
  @Field(() => ImportStatusDetailType) statusDetail!: ImportStatusDetailType;
  @Field(() => ImportConfigurationType) configuration!: ImportConfigurationType;
  @Field(() => ImportStatsType) stats!: ImportStatsType;
}

@ObjectType("ImportPage", { simpleResolvers: true })
export class ImportPageType {
  @Field(() => [ImportType]) items!: ImportType[];
  @Field(() => PageMetaType) meta!: PageMetaType;
}

@ObjectType("ImportRowFields", { simpleResolvers: true })
export class ImportRowFieldsType {
  @Field(() => String, { nullable: true }) account!: string | null;
  @Field(() => String, { nullable: true }) date!: string | null;
  @Field(() => String, { nullable: true }) amount!: string | null;
  @Field(() => String, { nullable: true }) currency!: string | null;
  @Field(() => String, { nullable: true }) name!: string | null;
  @Field(() => String, { nullable: true }) category!: string | null;
  @Field(() => String, { nullable: true }) tags!: string | null;
  @Field(() => String, { nullable: true }) notes!: string | null;
  @Field(() => String, { nullable: true, description: "A transaction import's merchant, as written (ours)." }) merchant!: string | null;
  @Field(() => String, { nullable: true, description: "A trade import's ticker." }) ticker!: string | null;
  @Field(() => String, { nullable: true, description: "A trade import's exchange (operating MIC)." }) exchangeOperatingMic!: string | null;
  @Field(() => String, { nullable: true, description: "A trade import's quantity, as written." }) qty!: string | null;
  @Field(() => String, { nullable: true, description: "A trade import's price, as written." }) price!: string | null;
  @Field(() => String, { nullable: true, description: "An account import's account type, as written." }) entityType!: string | null;
}

@ObjectType("ImportRowReading", { simpleResolvers: true, description: "What the row was read as (ours; upstream shows the fields only)." })
export class ImportRowReadingType {
  @Field(() => String, { nullable: true }) date!: string | null;
  @Field(() => String, { nullable: true, description: "The amount to store: positive is money out." }) amount!: string | null;
  @Field(() => String, { nullable: true }) currency!: string | null;
  @Field(() => ID, { nullable: true }) accountId!: string | null;
  @Field(() => ID, {
    nullable: true,
    description: "The transaction this row is recorded as: written by this import's publish, or by an earlier import of the same row.",
  })
  transactionId!: string | null;
}

@ObjectType("ImportRow", { simpleResolvers: true })
export class ImportRowType {
  @Field() id!: string;
  @Field(() => Int) rowNumber!: number;
  @Field() valid!: boolean;
  @Field(() => [String]) errors!: string[];
  @Field(() => ImportRowFieldsType) fields!: ImportRowFieldsType;
  @Field(() => GraphQLJSONObject, {
    description: "Upstream's mapping summaries: the account, category and tags named by the row, and (ours) its merchant.",
  })
  mappings!: Record<string, unknown>;
  @Field(() => ImportRowReadingType) reading!: ImportRowReadingType;
}

@ObjectType("ImportRowPage", { simpleResolvers: true })
export class ImportRowPageType {
  @Field(() => [ImportRowType]) items!: ImportRowType[];
  @Field(() => PageMetaType) meta!: PageMetaType;
}

@ObjectType("ImportProblem", { simpleResolvers: true })
export class ImportProblemType {
  @Field() code!: string;
  @Field() message!: string;
}

@ObjectType("ImportRowProblems", { simpleResolvers: true })
export class ImportRowProblemsType {
  @Field(() => Int) rowNumber!: number;
  @Field(() => [String]) problems!: string[];
}

@ObjectType("ImportPreflightContent", { simpleResolvers: true })
export class ImportPreflightContentType {
  @Field() fileName!: string;
  @Field() contentType!: string;
  @Field(() => Int) byteSize!: number;
}

@ObjectType("ImportPreflightStats", { simpleResolvers: true })
export class ImportPreflightStatsType {
  @Field(() => Int) rowsCount!: number;
  @Field(() => Int) validRowsCount!: number;
  @Field(() => Int) invalidRowsCount!: number;
  @Field(() => Int, { description: "Transactions a publish of this file would write now." }) importableCount!: number;
  @Field(() => Int, { description: "Valid rows already imported (the same file, or the same rows, before)." }) duplicateCount!: number;
}

@ObjectType("ImportPreflightDetected", { simpleResolvers: true })
export class ImportPreflightDetectedType {
  @Field() colSep!: string;
  @Field(() => String, { nullable: true }) dateFormat!: string | null;
  @Field(() => String, { nullable: true }) numberFormat!: string | null;
  @Field(() => GraphQLJSONObject, {
    description:
      "The columns the file is read with, each (by its name on the wire: date, amount, merchant …) with the header it was found under (ours).",
  })
  columns!: Record<string, string>;
}

@ObjectType("ImportPreflight", { simpleResolvers: true })
export class ImportPreflightType {
  @Field() type!: string;
  @Field() valid!: boolean;
  @Field(() => ImportPreflightContentType) content!: ImportPreflightContentType;
  @Field(() => ImportPreflightStatsType) stats!: ImportPreflightStatsType;
  @Field(() => [String]) headers!: string[];
  @Field(() => [String]) requiredHeaders!: string[];
  @Field(() => [String]) missingRequiredHeaders!: string[];
  @Field(() => [ImportProblemType]) errors!: ImportProblemType[];
  @Field(() => [String]) warnings!: string[];
  @Field(() => [ImportRowProblemsType], { description: "The first 100 rows with problems, in file order." })
  rowErrors!: ImportRowProblemsType[];
  @Field(() => ImportPreflightDetectedType) detected!: ImportPreflightDetectedType;
}

@InputType("ImportInput", { description: "A CSV file and how to read it (upstream's import configuration)." })
export class ImportInput {
  @Field({ description: "The file's content." }) rawFileContent!: string;
  @Field(() => String, { nullable: true, description: "TransactionImport (the default), AccountImport or TradeImport." })
  type?: string | null;
  @Field(() => ID, { nullable: true, description: "Every row goes to this account; without it, rows name their account." })
  accountId?: string | null;
  @Field(() => String, { nullable: true }) dateColLabel?: string | null;
  @Field(() => String, { nullable: true }) amountColLabel?: string | null;
  @Field(() => String, { nullable: true }) nameColLabel?: string | null;
  @Field(() => String, { nullable: true }) currencyColLabel?: string | null;
  @Field(() => String, { nullable: true }) categoryColLabel?: string | null;
  @Field(() => String, { nullable: true }) tagsColLabel?: string | null;
  @Field(() => String, { nullable: true }) notesColLabel?: string | null;
  @Field(() => String, { nullable: true }) accountColLabel?: string | null;
  @Field(() => String, { nullable: true }) qtyColLabel?: string | null;
  @Field(() => String, { nullable: true }) tickerColLabel?: string | null;
  @Field(() => String, { nullable: true }) priceColLabel?: string | null;
  @Field(() => String, { nullable: true }) entityTypeColLabel?: string | null;
  @Field(() => String, { nullable: true }) exchangeOperatingMicColLabel?: string | null;
  @Field(() => String, { nullable: true }) merchantColLabel?: string | null;
  @Field(() => String, { nullable: true }) dateFormat?: string | null;
  @Field(() => String, { nullable: true }) numberFormat?: string | null;
  @Field(() => String, { nullable: true }) signageConvention?: string | null;
  @Field(() => String, { nullable: true }) colSep?: string | null;
  @Field(() => Int, { nullable: true }) rowsToSkip?: number | null;
}
