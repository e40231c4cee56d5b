import busboy from "busboy";
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express";
import type { GraphQLSchema } from "graphql";
import { BadRequestError, DomainError, PayloadTooLargeError, ValidationError } from "../../platform/common/errors";
import { canWrite, insufficientScope, type Actor } from "../../platform/security/actor";
import type { RequestContext } from "../../transports/graphql/context";
import { authenticate, type CredentialChecks } from "../../transports/http/authenticate";
import { sendError } from "../../transports/http/respond";
import { snakeToCamel } from "../../../rest-adapter/case";
import { prepareOperations } from "../../../rest-adapter/operations";
import { domainErrorOf } from "../../../rest-adapter/rest-errors";
import { API_PREFIX, IMPORT_SETTING_KEYS } from "../../../rest-adapter/routes";
import type { ImportPreflight, ImportService, ImportUpload } from "./import.service";
import type { ImportSettingsInput } from "./import.rows";

/** Room for the other fields of a JSON body around its raw_file_content. */
const JSON_OVERHEAD = 64 * 1024;
const MAX_FIELD_BYTES = 64 * 1024;

type Fields = Record<string, unknown>;

function settingsOf(fields: Fields): ImportSettingsInput {
  const settings: Record<string, string | number | null> = {};
  for (const key of IMPORT_SETTING_KEYS) {
    const value = fields[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "string" && typeof value !== "number") throw new ValidationError([`${key} must be text`]);
    settings[snakeToCamel(key)] = value;
  }
  return settings as ImportSettingsInput;
}

/**
 * POST /api/v1/imports and POST /api/v1/imports/preflight, as upstream's clients send them: JSON with
 * `raw_file_content`, or multipart with the configuration fields before a `file` part. A multipart file
 * is read as it arrives (never held whole); the JSON form holds its string, bounded by IMPORT_MAX_BYTES.
 * The answers are upstream's: preflight `{data: {...}}`, create `201 {data: <the import as GET shows it>}`.
 * Creating needs a read_write credential; preflight writes nothing and any credential may ask.
 */
export function createImportUploadRouter(
  services: CredentialChecks & { imports: ImportService },
  schema: GraphQLSchema,
  contextOf: (req: Request) => RequestContext,
  rateLimit: RequestHandler[],
  maxBytes: number,
): express.Router {
  const router = express.Router();
  const show = prepareOperations(schema, ["getImport"]).get("getImport")!;
  const json = express.json({ limit: maxBytes + JSON_OVERHEAD });

  const handle = (kind: "create" | "preflight") => async (req: Request, res: Response, next: NextFunction) => {
    res.locals.route = `${API_PREFIX}/imports${kind === "preflight" ? "/preflight" : ""}`;
    const actor = res.locals.actor as Actor;
    try {
      if (kind === "create" && !canWrite(actor)) throw insufficientScope();
      if (kind === "preflight") {
        const report = await withUpload(req, json, maxBytes, (upload) => services.imports.preflight(actor, upload));
        res.status(200).json({ data: preflightBody(report) });
        return;
      }
      const created = await withUpload(req, json, maxBytes, (upload, publish) => services.imports.create(actor, upload, publish));
      const result = await show.run(contextOf(req), { id: created.id });
      if (result.errors?.length) throw domainErrorOf(result.errors) ?? new Error("the created import could not be read back");
      res.status(201).json(result.data);
    } catch (error) {
      if (!(error instanceof DomainError)) return next(error);
      // What is left of a refused upload is not read: the connection closes after the answer.
      if (!req.complete) {
        res.setHeader("Connection", "close");
        res.on("finish", () => req.destroy());
      }
      sendError(req, res, error);
    }
  };
  const guard = [authenticate(services, { required: true }), ...rateLimit];
  router.post(`${API_PREFIX}/imports/preflight`, ...guard, handle("preflight"));
  router.post(`${API_PREFIX}/imports`, ...guard, handle("create"));
  return router;
}

/** Runs `use` with the request's file and settings, from a JSON body or a multipart stream. */
async function withUpload<T>(
  req: Request,
  json: RequestHandler,
  maxBytes: number,
  use: (upload: ImportUpload, publish: boolean) => Promise<T>,
): Promise<T> {
  if (req.is("multipart/form-data")) return withMultipart(req, maxBytes, use);
  if (!req.is("application/json"))
    throw new BadRequestError("Send the file as multipart/form-data (a file part) or as JSON with raw_file_content");
  await new Promise<void>((resolve, reject) =>
    json(req, req.res!, (error?: unknown) => {
      const status = (error as { status?: number } | undefined)?.status;
      if (status === 413) reject(new PayloadTooLargeError(`The request is larger than IMPORT_MAX_BYTES (${maxBytes} bytes) allows`));
      else if (error) reject(new BadRequestError("Request body is not valid JSON"));
      else resolve();
    }),
  );
  const body = req.body as Fields | undefined;
  if (!body || typeof body !== "object" || Array.isArray(body)) throw new BadRequestError("Request body must be a JSON object");
  if (typeof body.raw_file_content !== "string" || body.raw_file_content === "")
    throw new ValidationError(["Provide a CSV file or raw_file_content"]);
  return use(
    { content: [body.raw_file_content], fileName: null, contentType: null, settings: settingsOf(body) },
    body.publish === true || body.publish === "true",
  );
}

function withMultipart<T>(req: Request, maxBytes: number, use: (upload: ImportUpload, publish: boolean) => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fields: Fields = {};
    let started = false;
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fields: 100, fieldSize: MAX_FIELD_BYTES, fileSize: maxBytes + 1 } });
    } catch {
      return reject(new BadRequestError("The multipart body could not be read"));
    }
    parser.on("field", (name, value, info) => {
      if (info.valueTruncated) return reject(new ValidationError([`${name} is longer than ${MAX_FIELD_BYTES} bytes`]));
      fields[name] = value;
    });
    parser.on("file", (name, stream, info) => {
      // A body cut short fails the file's stream: its reader gets the error (answered below as a 400); none is left unheard.
      stream.on("error", () => undefined);
      if (name !== "file" || started) {
        stream.resume();
        return;
      }
      started = true;
      let settings: ImportSettingsInput;
      try {
        settings = settingsOf(fields);
      } catch (error) {
        stream.resume();
        return reject(error);
      }
      use({ content: stream, fileName: info.filename || null, contentType: info.mimeType || null, settings }, fields.publish === "true")
        .then(resolve, (error: unknown) =>
          reject(error instanceof DomainError ? error : new BadRequestError("The multipart body ended before the file did")),
        )
        .finally(() => stream.resume());
    });
    parser.on("close", () => {
      if (started) return;
      if (typeof fields.raw_file_content === "string" && fields.raw_file_content !== "")
        use(
          { content: [fields.raw_file_content], fileName: null, contentType: null, settings: settingsOf(fields) },
          fields.publish === "true",
        ).then(resolve, reject);
      else reject(new ValidationError(["Provide a CSV file or raw_file_content"]));
    });
    parser.on("error", () => reject(new BadRequestError("The multipart body could not be read")));
    req.pipe(parser);
  });
}

/** Upstream's preflight payload, with our counts beside its own. */
function preflightBody(report: ImportPreflight) {
  return {
    type: report.type,
    valid: report.valid,
    content: { filename: report.content.fileName, content_type: report.content.contentType, byte_size: report.content.byteSize },
    stats: {
      rows_count: report.rowsCount,
      valid_rows_count: report.validRowsCount,
      invalid_rows_count: report.invalidRowsCount,
      importable_count: report.importableCount,
      duplicate_count: report.duplicateCount,
    },
    headers: report.headers,
    required_headers: report.requiredHeaders,
    missing_required_headers: report.missingRequiredHeaders,
    errors: report.errors,
    warnings: report.warnings,
    row_errors: report.rowErrors.map((row) => ({ row_number: row.rowNumber, errors: row.problems })),
    detected: {
      col_sep: report.detected.columnSeparator,
      date_format: report.detected.dateFormat,
      number_format: report.detected.numberFormat,
      columns: report.detected.columns,
    },
  };
}
