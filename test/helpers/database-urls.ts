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
