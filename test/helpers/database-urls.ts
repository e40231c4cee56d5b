/** Where tests find PostgreSQL and Redis; the machine's local servers unless overridden. */
export function adminUrl(): string {
  return process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
}

export function databaseUrl(database: string): string {
  const url = new URL(adminUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

export function redisUrl(): string {
  return process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
}

/** One template per run: the pid of the jest parent process keeps concurrent runs apart. */
export const TEMPLATE_DATABASE = `fg_test_template_${process.env.FG_TEST_RUN ?? "0"}`;

/** The names of the databases this run's files clone from the template start with this. */
export const RUN_DATABASE_PREFIX = `fg_test_${process.env.FG_TEST_RUN ?? "0"}_`;

/** The run a test database or template belongs to (the jest parent's pid), from its name. */
export function runOfDatabase(name: string): number | null {
  const match = /^fg_test_(?:template_)?(\d+)(?:_|$)/.exec(name);
  return match ? Number(match[1]) : null;
}
