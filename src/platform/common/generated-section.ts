/**
 * Pages of docs/ with a part generated from the code (`npm run contracts`): the part sits between two
 * marker comments, and the hand-written text around it is kept as it is.
 */
export type GeneratedSection = { file: string; begin: string; end: string };

/** The page with its generated part replaced by `generated` (which starts with `begin` and ends with `end`). */
export function replaceGeneratedSection(current: string, section: GeneratedSection, generated: string): string {
  const start = current.indexOf(section.begin);
  const end = current.indexOf(section.end);
  if (start < 0 || end < start) throw new Error(`${section.file} lacks the generated-part markers (${section.begin})`);
  return current.slice(0, start) + generated + current.slice(end + section.end.length);
}
