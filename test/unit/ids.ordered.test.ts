import { isUuid, newOrderedId } from "../../src/platform/common/ids";

/**
 * Audit events are listed by their time, then their id: ids made in the same millisecond must sort in
 * the order they were made, or two events recorded one after the other list at random.
 */
test("ordered ids are version 7 UUIDs that sort as they were made, many to a millisecond", () => {
  const ids = Array.from({ length: 20_000 }, () => newOrderedId());
  expect(ids.every(isUuid)).toBe(true);
  expect(ids.every((id) => id[14] === "7" && "89ab".includes(id[19]))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids.every((id, i) => i === 0 || ids[i - 1] < id)).toBe(true);
  // Their time is the time they were made (to the millisecond, a borrowed one at most a few ahead).
  const ms = parseInt(ids.at(-1)!.replace(/-/g, "").slice(0, 12), 16);
  expect(Math.abs(ms - Date.now())).toBeLessThan(1_000);
});
