import type { VocabularyEntry } from "./finance.repository";

/**
 * The family's own names (categories, merchants, accounts, tags) and how words of a question or a
 * tool's arguments are matched against them: case-, punctuation- and plural-insensitive, with a small
 * table of synonyms and tolerance for a typo or two. Whatever does not match is reported with the
 * closest names, never replaced by something else silently.
 */
export type SubjectKind = VocabularyEntry["kind"];

export type Subject = VocabularyEntry & {
  /** The words of the question that matched, when they are not simply the name. */
  matched?: string;
};

/** Everyday words for what families name their categories; a synonym applies only to names the family has. */
const SYNONYMS: Array<{ words: string[]; names: string[] }> = [
  {
    words: ["dining", "dining out", "eating out", "eat out", "restaurant", "restaurants", "takeout", "take out", "food and drink"],
    names: ["food and drink", "dining", "dining out", "restaurants", "restaurant", "food"],
  },
  { words: ["grocery", "groceries", "supermarket", "supermarkets", "food shopping"], names: ["groceries", "grocery", "food"] },
  { words: ["gas", "fuel", "petrol", "gasoline"], names: ["gas", "fuel", "auto and transport", "transportation", "transport"] },
  {
    words: ["transport", "transit", "commute", "commuting", "rides", "taxi", "taxis"],
    names: ["transportation", "transport", "auto and transport"],
  },
  { words: ["doctor", "doctors", "medical", "pharmacy", "health", "medicine"], names: ["healthcare", "health", "medical"] },
  { words: ["movies", "cinema", "concerts", "fun"], names: ["entertainment"] },
  { words: ["bills", "utility", "electricity", "power bill", "internet", "phone bill"], names: ["utilities", "bills and utilities"] },
  { words: ["housing", "rent payment", "mortgage"], names: ["rent", "housing", "mortgage"] },
  { words: ["trips", "trip", "vacations", "holiday", "holidays", "flights", "hotels"], names: ["travel", "vacation"] },
  { words: ["paycheck", "paychecks", "wages", "pay", "payroll"], names: ["salary", "income", "paycheck"] },
  { words: ["streaming", "memberships"], names: ["subscriptions"] },
  { words: ["clothes", "clothing", "online shopping"], names: ["shopping"] },
];

/** The synonyms of more than one word, which must be read before their small words ("out") are set aside. */
export const SYNONYM_PHRASES = SYNONYMS.flatMap((synonym) => synonym.words)
  .filter((word) => word.includes(" "))
  .sort((a, b) => b.length - a.length);

/** Lower case, no apostrophes, `&` read as "and", every other mark a space, single spaces. */
export function normalizeText(text: string): string {
  return text
    .toLowerCase()
    .replace(/[\u2018\u2019'`]/g, "")
    .replace(/&/g, " and ")
    .replace(/[^a-z0-9\s.$-]/g, " ")
    .replace(/(?<![0-9])\.|\.(?![0-9])/g, " ")
    .replace(/(?<![a-z0-9])-|-(?![a-z0-9])/g, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** A word without its plural ending: "groceries" → "grocery", "merchants" → "merchant", "bus" stays. */
export function singular(word: string): string {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 4 && /(ches|shes|sses|xes)$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !/(ss|us|is)$/.test(word)) return word.slice(0, -1);
  return word;
}

const singularPhrase = (phrase: string) => phrase.split(" ").map(singular).join(" ");

/** Edit distance with adjacent transpositions, stopping early past `limit`. */
export function editDistance(a: string, b: string, limit = 3): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2][j - 2] + 1);
      rows[i][j] = best;
    }
  }
  return rows[a.length][b.length];
}

/** Typos tolerated for a word of this length: none for short words, where one letter changes the word. */
const typosAllowed = (length: number) => (length >= 8 ? 2 : length >= 5 ? 1 : 0);

export class FamilyVocabulary {
  private readonly keyed: Array<VocabularyEntry & { key: string }>;

  constructor(readonly entries: VocabularyEntry[]) {
    this.keyed = entries.map((entry) => ({ ...entry, key: singularPhrase(normalizeText(entry.name)) }));
  }

  names(kind: SubjectKind): string[] {
    return this.entries.filter((entry) => entry.kind === kind).map((entry) => entry.name);
  }

  /** Entries whose whole name is this phrase (case-, punctuation- and plural-insensitive), optionally of one kind. */
  exact(phrase: string, kind?: SubjectKind): VocabularyEntry[] {
    const key = singularPhrase(normalizeText(phrase));
    return this.keyed.filter((entry) => entry.key === key && (!kind || entry.kind === kind)).map(strip);
  }

  /** Entries whose names contain this phrase as whole words, sorted by name length ("coffee" → "Blue Bottle Coffee"). */
  containing(phrase: string): VocabularyEntry[] {
    const key = ` ${singularPhrase(normalizeText(phrase))} `;
    if (key.trim().length < 4) return [];
    return this.keyed.filter((entry) => ` ${entry.key} `.includes(key)).map(strip);
  }

  /** Entries a synonym of this phrase names, among the family's own. */
  synonyms(phrase: string): VocabularyEntry[] {
    const key = singularPhrase(normalizeText(phrase));
    const found: VocabularyEntry[] = [];
    for (const synonym of SYNONYMS) {
      if (!synonym.words.some((word) => singularPhrase(word) === key)) continue;
      for (const name of synonym.names) {
        const entries = this.exact(name).filter((entry) => entry.kind === "category" || entry.kind === "tag");
        if (entries.length) {
          found.push(...entries);
          break;
        }
      }
      if (found.length) break;
    }
    return found;
  }

  /** Entries within a typo or two of this phrase, whole name or one of its words, closest first. */
  nearly(phrase: string): VocabularyEntry[] {
    const key = singularPhrase(normalizeText(phrase));
    const allowed = typosAllowed(key.length);
    if (allowed === 0) return [];
    let best = allowed + 1;
    let found: VocabularyEntry[] = [];
    for (const entry of this.keyed) {
      const candidates = [entry.key, ...entry.key.split(" ").filter((word) => word.length >= 5)];
      const distance = Math.min(...candidates.map((candidate) => editDistance(key, candidate, allowed)));
      if (distance < best) {
        best = distance;
        found = [strip(entry)];
      } else if (distance === best && distance <= allowed) found.push(strip(entry));
    }
    return best <= allowed ? found : [];
  }

  /** The best reading of a phrase: its exact name, a synonym, a name holding it, or one typo away. */
  resolve(phrase: string, kind?: SubjectKind): Subject[] {
    const exact = this.exact(phrase, kind);
    if (exact.length) return exact;
    const text = normalizeText(phrase);
    const ofKind = (entries: VocabularyEntry[]) => entries.filter((entry) => !kind || entry.kind === kind);
    for (const entries of [this.synonyms(text), this.containing(text), this.nearly(text)]) {
      const chosen = oneKind(ofKind(entries));
      if (chosen.length) return chosen.map((entry) => ({ ...entry, matched: text }));
    }
    return [];
  }

  /** Up to `count` names that look most like the phrase, for "I couldn't find … (closest: …)". */
  closest(phrase: string, count = 3, kind?: SubjectKind): string[] {
    const key = singularPhrase(normalizeText(phrase));
    const scored = this.keyed
      .filter((entry) => !kind || entry.kind === kind)
      .map((entry) => {
        const words = [entry.key, ...entry.key.split(" ")];
        const distance = Math.min(...words.map((word) => editDistance(key, word, 20) / Math.max(key.length, word.length, 1)));
        const prefix = words.some((word) => word.startsWith(key.slice(0, 3)) && key.length >= 3) ? -0.2 : 0;
        return { name: entry.name, score: distance + prefix };
      })
      .sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
    return [...new Set(scored.map((entry) => entry.name))].slice(0, count);
  }
}

/**
 * A loose match that hits names of several kinds ("food": a category and a merchant) keeps the most
 * general kind only: combining kinds would narrow the question to their overlap.
 */
const KIND_PREFERENCE: SubjectKind[] = ["category", "tag", "merchant", "account"];
function oneKind(entries: VocabularyEntry[]): VocabularyEntry[] {
  const kind = KIND_PREFERENCE.find((candidate) => entries.some((entry) => entry.kind === candidate));
  return entries.filter((entry) => entry.kind === kind);
}

const strip = ({ kind, id, name }: VocabularyEntry & { key: string }): VocabularyEntry => ({ kind, id, name });
