/**
 * Periods of time as people name them in questions ("last month", "March 2025", "since January",
 * "between March and May", "the month before"), resolved against today (UTC). Every period carries
 * the dates it resolved to, and answers state them.
 */
export type PeriodUnit = "day" | "week" | "month" | "quarter" | "year" | "span";

export type Period = { start: string; end: string; name: string; unit: PeriodUnit };

export const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];
const SHORT_MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
export const MONTH_NAMES = MONTHS.map((month) => month.charAt(0).toUpperCase() + month.slice(1));

const iso = (date: Date) => date.toISOString().slice(0, 10);
const utc = (year: number, month: number, day: number) => new Date(Date.UTC(year, month, day));
const parseIso = (date: string) => new Date(`${date}T00:00:00Z`);

/** "last month (2026-10-01 to 2026-10-31)": the name and the dates it stands for. */
export function describe(period: Period): string {
  return period.start === period.end ? `${period.name} (${period.start})` : `${period.name} (${period.start} to ${period.end})`;
}

export function monthPeriod(year: number, month: number, name?: string): Period {
  const start = utc(year, month, 1);
  return {
    start: iso(start),
    end: iso(utc(year, month + 1, 0)),
    name: name ?? `in ${MONTH_NAMES[start.getUTCMonth()]} ${start.getUTCFullYear()}`,
    unit: "month",
  };
}

export function currentMonth(today: string): Period {
  const now = parseIso(today);
  return { start: iso(utc(now.getUTCFullYear(), now.getUTCMonth(), 1)), end: today, name: "this month", unit: "month" };
}

/** Whole calendar months from the month of `first` through the month before today's. */
export function wholeMonthsSince(first: string, today: string): Period {
  const start = parseIso(first);
  const now = parseIso(today);
  return {
    start: iso(utc(start.getUTCFullYear(), start.getUTCMonth(), 1)),
    end: iso(utc(now.getUTCFullYear(), now.getUTCMonth(), 0)),
    name: "over your whole history",
    unit: "span",
  };
}

/** Calendar months the period touches (a partial month counts as one). */
export function monthsIn(period: Period): number {
  const start = parseIso(period.start);
  const end = parseIso(period.end);
  return (end.getUTCFullYear() - start.getUTCFullYear()) * 12 + end.getUTCMonth() - start.getUTCMonth() + 1;
}

/** Weeks the period spans, rounded up. */
export function weeksIn(period: Period): number {
  return Math.ceil((parseIso(period.end).getTime() - parseIso(period.start).getTime()) / 86_400_000 / 7 + 1 / 7);
}

/** The period just before this one, of the same kind: the month before a month, the year before a year. */
export function previous(period: Period, unit: PeriodUnit = period.unit): Period {
  const start = parseIso(period.start);
  const [year, month, day] = [start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate()];
  if (unit === "month") return monthPeriod(year, month - 1);
  if (unit === "year") return { start: iso(utc(year - 1, 0, 1)), end: iso(utc(year - 1, 11, 31)), name: `in ${year - 1}`, unit };
  if (unit === "quarter") {
    const first = utc(year, Math.floor(month / 3) * 3 - 3, 1);
    return { start: iso(first), end: iso(utc(first.getUTCFullYear(), first.getUTCMonth() + 3, 0)), name: "the quarter before", unit };
  }
  if (unit === "week") return { start: iso(utc(year, month, day - 7)), end: iso(utc(year, month, day - 1)), name: "the week before", unit };
  const length = Math.round((parseIso(period.end).getTime() - start.getTime()) / 86_400_000) + 1;
  return {
    start: iso(utc(year, month, day - length)),
    end: iso(utc(year, month, day - 1)),
    name: unit === "day" ? "the day before" : "the period before",
    unit,
  };
}

export type FoundPeriod = { period: Period; text: string };

/** A relative period a follow-up names: "the month before", "the previous year", "before that". */
export function relativeUnit(text: string): { unit: PeriodUnit | null; text: string } | null {
  const match =
    /\b(?:the )?(?:(day|week|month|quarter|year) before(?: that)?|(?:previous|prior) (day|week|month|quarter|year)|before that|the one before)\b/.exec(
      text,
    );
  if (!match) return null;
  return { unit: (match[1] ?? match[2] ?? null) as PeriodUnit | null, text: match[0] };
}

type Rule = { pattern: RegExp; resolve(match: RegExpExecArray, now: Date, today: string): Period | null };

const monthAlternatives = [...MONTHS, ...SHORT_MONTHS].filter((month) => month !== "may").join("|");
const monthIndex = (name: string) => (MONTHS.includes(name) ? MONTHS.indexOf(name) : SHORT_MONTHS.indexOf(name));

/** A month named without a year is the latest one that has begun. */
function namedMonth(name: string, year: string | undefined, now: Date): Period {
  const index = monthIndex(name);
  const inYear = year ? Number(year) : index <= now.getUTCMonth() ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
  return monthPeriod(inYear, index);
}

function namedDay(name: string, day: number, year: string | undefined, now: Date): Period | null {
  const month = monthIndex(name);
  const begun = month < now.getUTCMonth() || (month === now.getUTCMonth() && day <= now.getUTCDate());
  const inYear = year ? Number(year) : begun ? now.getUTCFullYear() : now.getUTCFullYear() - 1;
  const date = utc(inYear, month, day);
  if (day < 1 || date.getUTCMonth() !== month) return null;
  return { start: iso(date), end: iso(date), name: `on ${day} ${MONTH_NAMES[month]} ${inYear}`, unit: "day" };
}

/** A point named in "since …" or "between … and …": a date, a month (with or without year) or a year. */
const POINT = `(\\d{4}-\\d{2}-\\d{2}|(?:${monthAlternatives}|may)(?: \\d{4})?|\\d{4})`;

function point(text: string, now: Date): Period | null {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return { start: text, end: text, name: text, unit: "day" };
  if (/^\d{4}$/.test(text)) return { start: `${text}-01-01`, end: `${text}-12-31`, name: `in ${text}`, unit: "year" };
  const [name, year] = text.split(" ");
  return namedMonth(name, year, now);
}

const RULES: Rule[] = [
  {
    pattern: new RegExp(`\\b(?:between|from) ${POINT} (?:and|to|until|through) ${POINT}\\b`),
    resolve: (match, now) => {
      const from = point(match[1], now);
      const to = point(match[2], now);
      if (!from || !to || from.start > to.end) return null;
      return { start: from.start, end: to.end, name: `between ${from.start} and ${to.end}`, unit: "span" };
    },
  },
  {
    pattern: new RegExp(`\\bsince ${POINT}\\b`),
    resolve: (match, now, today) => {
      const from = point(match[1], now);
      return from && from.start <= today ? { start: from.start, end: today, name: `since ${from.start}`, unit: "span" } : null;
    },
  },
  { pattern: /\btoday\b/, resolve: (_m, _n, today) => ({ start: today, end: today, name: "today", unit: "day" }) },
  {
    pattern: /\byesterday\b/,
    resolve: (_m, now) => {
      const day = iso(utc(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - 1));
      return { start: day, end: day, name: "yesterday", unit: "day" };
    },
  },
  {
    pattern: /\bon (\d{4}-\d{2}-\d{2})\b/,
    resolve: (match) => point(match[1], new Date(0)),
  },
  {
    // "on 1 March", "March 1st", "the 1st of March 2026": one day; without a year, the latest one that has begun.
    pattern: new RegExp(
      `\\b(?:on )?(?:the )?(?:(\\d{1,2})(?:st|nd|rd|th)? (?:of )?(${monthAlternatives}|may)|(${monthAlternatives}|may) (\\d{1,2})(?:st|nd|rd|th)?)(?:,? (\\d{4}))?\\b`,
    ),
    resolve: (match, now) => namedDay(match[2] ?? match[3], Number(match[1] ?? match[4]), match[5], now),
  },
  {
    pattern: /\b(?:in the )?(?:last|past|previous) (\d{1,3}) (day|week|month)s?\b/,
    resolve: (match, now, today) => {
      const count = Number(match[1]);
      if (count < 1) return null;
      const [year, month, day] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
      const name = `in the last ${count} ${match[2]}${count === 1 ? "" : "s"}`;
      if (match[2] === "day") return { start: iso(utc(year, month, day - count + 1)), end: today, name, unit: "span" };
      if (match[2] === "week") return { start: iso(utc(year, month, day - 7 * count + 1)), end: today, name, unit: "span" };
      // The last N whole months, the current one excluded.
      return { start: iso(utc(year, month - count, 1)), end: iso(utc(year, month, 0)), name, unit: "span" };
    },
  },
  {
    pattern: /\b(this|current|last|previous) (week|month|quarter|year)\b|\b(month|year|quarter) to date\b|\bytd\b/,
    resolve: (match, now, today) => {
      const [year, month, day] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
      const unit = (match[2] ?? match[3] ?? "year") as PeriodUnit;
      const last = match[1] === "last" || match[1] === "previous";
      if (unit === "week") {
        const monday = day - ((now.getUTCDay() + 6) % 7);
        return last
          ? { start: iso(utc(year, month, monday - 7)), end: iso(utc(year, month, monday - 1)), name: "last week", unit }
          : { start: iso(utc(year, month, monday)), end: today, name: "this week", unit };
      }
      if (unit === "month") return last ? monthPeriod(year, month - 1, "last month") : currentMonth(today);
      if (unit === "quarter") {
        const first = Math.floor(month / 3) * 3;
        if (!last) return { start: iso(utc(year, first, 1)), end: today, name: "this quarter", unit };
        const start = utc(year, first - 3, 1);
        return { start: iso(start), end: iso(utc(year, first, 0)), name: "last quarter", unit };
      }
      return last
        ? { start: `${year - 1}-01-01`, end: `${year - 1}-12-31`, name: `last year`, unit }
        : { start: `${year}-01-01`, end: today, name: "this year", unit };
    },
  },
  {
    // "in March", "March 2025", "for Oct"; a bare "may" is more often a verb than a month.
    pattern: new RegExp(
      `\\b(?:(?:in|during|for|of) (${monthAlternatives}|may)(?: (\\d{4}))?|(${monthAlternatives}|may) (\\d{4})|(${monthAlternatives}))\\b`,
    ),
    resolve: (match, now) => namedMonth(match[1] ?? match[3] ?? match[5], match[2] ?? match[4], now),
  },
  {
    pattern: /\b(?:in |during |for )?(?<![$.\d])((?:19|20)\d{2})\b(?!\.\d)/,
    resolve: (match) => ({ start: `${match[1]}-01-01`, end: `${match[1]}-12-31`, name: `in ${match[1]}`, unit: "year" }),
  },
];

/**
 * Every period a (normalized) question names, in the order they appear, each with the words it was
 * read from so the reader can mark them understood. A named year that has not begun is left unread.
 */
export function findPeriods(text: string, today: string): FoundPeriod[] {
  const now = parseIso(today);
  const found: Array<FoundPeriod & { at: number }> = [];
  let rest = text;
  for (const rule of RULES) {
    for (let guard = 0; guard < 4; guard++) {
      const match = rule.pattern.exec(rest);
      if (!match) break;
      const period = rule.resolve(match, now, today);
      rest = rest.slice(0, match.index) + "_".repeat(match[0].length) + rest.slice(match.index + match[0].length);
      if (period && period.start <= today)
        found.push({ period: { ...period, end: period.end > today ? today : period.end }, text: match[0], at: match.index });
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ period, text: words }) => ({ period, text: words }));
}

/** The last day a forward-looking question ("bills due before the 15th") covers, and how it was named. */
export type Deadline = { date: string; name: string };

/** A day of month from today on: this month's when it has not passed, else next month's (clamped to the month's last day). */
function comingDay(now: Date, day: number, inclusive: boolean): Date {
  const [year, month, today] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  const inMonth = (offset: number) => utc(year, month + offset, Math.min(day, utc(year, month + offset + 1, 0).getUTCDate()));
  const candidate = inMonth(0);
  return candidate.getUTCDate() > today || (inclusive && candidate.getUTCDate() === today) ? candidate : inMonth(1);
}

const DEADLINE_RULES: Array<{ pattern: RegExp; resolve(match: RegExpExecArray, now: Date): Deadline | null }> = [
  {
    // "before the 15th", "by the 1st of March", "until March 3", "before 2026-12-24".
    pattern: new RegExp(
      `\\b(before|by|until|till|through) (?:the )?(?:(\\d{4}-\\d{2}-\\d{2})|(\\d{1,2})(?:st|nd|rd|th)?(?: (?:of )?(${monthAlternatives}|may))?|(${monthAlternatives}|may) (\\d{1,2})(?:st|nd|rd|th)?)\\b`,
    ),
    resolve: (match, now) => {
      const inclusive = match[1] !== "before";
      let day: Date;
      if (match[2]) day = parseIso(match[2]);
      else {
        const number = Number(match[3] ?? match[6]);
        const name = match[4] ?? match[5];
        if (number < 1 || number > 31) return null;
        if (name) {
          const month = monthIndex(name);
          const thisYear = utc(now.getUTCFullYear(), month, number);
          if (thisYear.getUTCMonth() !== month) return null;
          day =
            thisYear < now || (!inclusive && thisYear.getTime() === now.getTime())
              ? utc(now.getUTCFullYear() + 1, month, number)
              : thisYear;
        } else day = comingDay(now, number, inclusive);
      }
      const last = inclusive ? day : utc(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() - 1);
      return { date: iso(last), name: `${match[1]} ${iso(day)}` };
    },
  },
  {
    pattern: /\b(?:in the )?next (\d{1,3}) days\b/,
    resolve: (match, now) => ({
      date: iso(utc(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + Number(match[1]))),
      name: `in the next ${Number(match[1])} days`,
    }),
  },
  {
    pattern: /\b(this|next) (week|month)\b/,
    resolve: (match, now) => {
      const [year, month, day] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
      const next = match[1] === "next" ? 1 : 0;
      if (match[2] === "month") return { date: iso(utc(year, month + next + 1, 0)), name: `${match[1]} month` };
      const sunday = day + ((7 - now.getUTCDay()) % 7);
      return { date: iso(utc(year, month, sunday + 7 * next)), name: `${match[1]} week` };
    },
  },
  { pattern: /\btoday\b/, resolve: (_match, now) => ({ date: iso(now), name: "today" }) },
  {
    pattern: /\btomorrow\b/,
    resolve: (_match, now) => ({ date: iso(utc(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)), name: "tomorrow" }),
  },
];

/**
 * The deadline a question about what is due names, with the words it was read from; none named is the
 * end of this month. Unlike periods, deadlines look forward from today.
 */
export function findDeadline(text: string, today: string): { deadline: Deadline; text: string | null } {
  const now = parseIso(today);
  for (const rule of DEADLINE_RULES) {
    const match = rule.pattern.exec(text);
    const deadline = match && rule.resolve(match, now);
    if (match && deadline && deadline.date >= today) return { deadline, text: match[0] };
  }
  return { deadline: { date: iso(utc(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)), name: "this month" }, text: null };
}
