/** An integer benchmark setting from the environment (benchmarks are scripts, not the service: they read process.env themselves). */
export function integerSetting(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer in [${min}, ${max}], got ${raw}`);
  return value;
}
