/** "1 event", "2 events", "1,234 events": a count with its noun, in English. */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString("en")} ${count === 1 ? one : many}`;
}
