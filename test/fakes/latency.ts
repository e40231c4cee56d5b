/**
 * A fake upstream's deliberate latency (not a test waiting for something): it answers `ms` later, as a
 * slow service would, so work in flight can be observed or interrupted. Tests wait with eventually.
 */
export function respondAfter(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
