import { UniqueConstraintError } from "sequelize";
import { ValidationError, type ValidationErrors } from "./errors";

const COLOR_PATTERN = /^#[0-9a-fA-F]{6}$/;

/** Trims a required name and reports it blank or too long; returns the trimmed value. */
export function requiredText(problems: ValidationErrors, label: string, value: string | null | undefined, maxLength: number): string {
  const text = value?.trim() ?? "";
  if (text === "") problems.add(`${label} can't be blank`);
  else checkStorable(problems, label, text, maxLength);
  return text;
}

export function optionalText(
  problems: ValidationErrors,
  label: string,
  value: string | null | undefined,
  maxLength: number,
): string | null {
  if (value === null || value === undefined) return null;
  checkStorable(problems, label, value, maxLength);
  return value;
}

/** PostgreSQL text cannot hold NUL characters; saying so beats storing something else. */
function checkStorable(problems: ValidationErrors, label: string, text: string, maxLength: number): void {
  if (text.length > maxLength) problems.add(`${label} is too long (maximum is ${maxLength} characters)`);
  if (text.includes("\u0000")) problems.add(`${label} must not contain NUL characters`);
}

/** C0 controls (CR, LF, tab, NUL …), DEL and C1 controls; with `multiline`, line feeds and tabs pass. */
// eslint-disable-next-line no-control-regex -- control characters are what these look for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
// eslint-disable-next-line no-control-regex -- likewise
const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

/**
 * Refuses control characters in a value that ends up in a protocol line (a URL, a header value, a token,
 * an SMTP or syslog field): CR/LF there would split the line it is written into. Answers whether it passed.
 */
export function checkNoControlCharacters(
  problems: ValidationErrors,
  label: string,
  value: unknown,
  { multiline = false }: { multiline?: boolean } = {},
): boolean {
  if (typeof value !== "string" || !(multiline ? CONTROL_BUT_LINES : CONTROL).test(value)) return true;
  problems.add(`${label} must not contain control characters (such as CR or LF)`);
  return false;
}

export function checkColor(problems: ValidationErrors, label: string, value: string | null | undefined): void {
  if (value !== null && value !== undefined && !COLOR_PATTERN.test(value)) problems.add(`${label} must be a hex color like #1a2b3c`);
}

export function checkHttpUrl(problems: ValidationErrors, label: string, value: string | null | undefined): void {
  if (value === null || value === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) problems.add(`${label} must be an http or https URL`);
  else if (value.length > 2048) problems.add(`${label} is too long (maximum is 2048 characters)`);
}

/**
 * Runs a write guarded by a unique index. Two concurrent writers can both pass a pre-check; the index
 * settles it, and the loser gets the same validation message as a pre-check failure.
 */
export async function saveUnique<T>(message: string, save: () => Promise<T>): Promise<T> {
  try {
    return await save();
  } catch (error) {
    if (error instanceof UniqueConstraintError) throw new ValidationError([message]);
    throw error;
  }
}
