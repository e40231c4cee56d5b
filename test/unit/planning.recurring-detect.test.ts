import {
  circularDistance,
  daysClusterTogether,
  expectedDay,
  nextExpectedDate,
  shiftDays,
  shiftMonths,
} from "../../src/finance/planning/recurring.detect";

/**
 * The pure rules of recurring detection (upstream's RecurringTransaction::Identifier): which days of
 * month make a monthly cadence, the expected day, and the next expected date. Grouping (same account,
 * merchant or name, amount to the cent, currency; three or more, the newest within 45 days) is SQL and
 * is covered with the service in test/integration/planning.recurring.test.ts. The expected values
 * are worked out by hand in the comments.
 */
describe("circular distance between days of month (a 31-day circle)", () => {
  test.each([
    [10, 10, 0],
    [10, 14, 4],
    [14, 10, 4],
    [1, 31, 1], // 30 apart on the line, 1 across the month's end
    [28, 2, 5], // 28 → 29 → 30 → 31 → 1 → 2
    [1, 16, 15],
    [1, 17, 15], // 16 on the line, 15 around
  ])("between %i and %i is %i", (a, b, distance) => {
    expect(circularDistance(a, b)).toBe(distance);
  });
});

describe("the expected day: the circular median", () => {
  test.each([
    [[15], 15],
    [[14, 15, 16], 15],
    [[16, 14, 15], 15], // order does not matter
    [[5, 5, 6], 5],
    [[30, 31, 1], 31], // rotated to sit together: 30, 31, 1 → median 31
    [[29, 30, 31, 1, 2], 31],
    [[28, 1, 2], 1], // 28, (29, 30, 31,) 1, 2 → median 1
    [[10, 13], 12], // even count: the mean of the middle two (11.5) rounded up
    [[31, 2], 1], // 31 and 2 are 2 apart across the month's end: halfway is the 1st
  ])("of %j is %i", (days, day) => {
    expect(expectedDay(days)).toBe(day);
  });
});

describe("cadence: the days cluster when the standard deviation of their distances to the expected day is at most 5", () => {
  test("a monthly bill on about the same day clusters", () => {
    expect(daysClusterTogether([5, 6, 5])).toBe(true);
    expect(daysClusterTogether([1, 3, 2, 1, 4, 2])).toBe(true);
  });

  test("a monthly bill around the month's end clusters (distances across the month's end)", () => {
    // 29, 1, 2 rotated to sit together: 29, (30, 31,) 1, 2 → expected day 1; distances 3, 0, 1; deviation ≈ 1.25.
    expect(expectedDay([29, 1, 2])).toBe(1);
    expect(daysClusterTogether([29, 1, 2])).toBe(true);
  });

  test("an irregular series does not when its distances are uneven", () => {
    // 10, 10, 10, 10, 25: expected day 10, distances 0, 0, 0, 0, 15, mean 3, standard deviation 6.
    expect(daysClusterTogether([10, 10, 10, 10, 25])).toBe(false);
    // One more on the 10th: distances 0 ×5 and 15, mean 2.5, standard deviation √31.25 ≈ 5.59.
    expect(daysClusterTogether([10, 10, 10, 10, 10, 25])).toBe(false);
    // One fewer: distances 0, 0, 0, 15, mean 3.75, standard deviation √42.19 ≈ 6.50.
    expect(daysClusterTogether([10, 10, 10, 25])).toBe(false);
  });

  test("as upstream measures it, evenly spread days pass: the deviation is of the distances, not the distances themselves", () => {
    // 1, 16, 1, 16: expected day 9 (the middle of 1 and 16, rounded up); distances 8, 7, 8, 7, standard deviation 0.5.
    expect(expectedDay([1, 16, 1, 16])).toBe(9);
    expect(daysClusterTogether([1, 16, 1, 16])).toBe(true);
    // 1, 11, 21: expected day 11; distances 10, 0, 10, standard deviation √22.2 ≈ 4.71.
    expect(daysClusterTogether([1, 11, 21])).toBe(true);
  });

  test("so a weekly charge of one amount passes too, and is read as monthly (upstream's rule, kept)", () => {
    // 1, 8, 15, 22, 29: the widest gap is 28 → 1 (3 days), so the rotation starting after it gives expected
    // day 22; distances 10, 14, 7, 0, 7, mean 7.6, standard deviation √21.04 ≈ 4.59.
    expect(expectedDay([1, 8, 15, 22, 29])).toBe(22);
    expect(daysClusterTogether([1, 8, 15, 22, 29])).toBe(true);
    // Thirteen Mondays from 3 August 2026, what three months of a weekly charge look like.
    const mondays = Array.from({ length: 13 }, (_, week) => Number(shiftDays("2026-08-03", 7 * week).slice(8)));
    expect(daysClusterTogether(mondays)).toBe(true);
  });

  test("no days, no pattern", () => {
    expect(daysClusterTogether([])).toBe(false);
  });

  test("a yearly charge never reaches detection: one occurrence in the three months looked at, three are needed (SQL)", () => {
    // Its single day clusters with itself; the count rule (HAVING count(*) >= 3) is what leaves it out.
    expect(daysClusterTogether([12])).toBe(true);
  });
});

describe("the next expected date: the month after the last occurrence, on the expected day", () => {
  test.each([
    ["2026-11-15", 15, "2026-12-15"],
    ["2026-11-03", 15, "2026-12-15"], // from the last occurrence's month, whatever its day
    ["2026-12-10", 12, "2027-01-12"], // across the year's end
    ["2026-01-31", 31, "2026-02-28"], // a month without the day: its last day
    ["2024-01-30", 30, "2024-02-29"], // leap year
    ["2026-03-31", 31, "2026-04-30"],
    ["2026-05-02", 31, "2026-06-30"],
    ["2026-07-31", 1, "2026-08-01"],
  ])("after %s on day %i is %s", (last, day, next) => {
    expect(nextExpectedDate(last, day)).toBe(next);
  });
});

describe("the window's dates", () => {
  test.each([
    ["2026-05-31", -3, "2026-02-28"],
    ["2026-05-15", -3, "2026-02-15"],
    ["2026-01-31", 1, "2026-02-28"],
    ["2024-05-30", -3, "2024-02-29"],
    ["2026-02-10", -3, "2025-11-10"],
  ])("%s shifted by %i months is %s", (date, months, shifted) => {
    expect(shiftMonths(date, months)).toBe(shifted);
  });

  test.each([
    ["2026-03-01", -45, "2026-01-15"],
    ["2026-12-31", 1, "2027-01-01"],
    ["2024-03-01", -1, "2024-02-29"],
  ])("%s shifted by %i days is %s", (date, days, shifted) => {
    expect(shiftDays(date, days)).toBe(shifted);
  });
});
