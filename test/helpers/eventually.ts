/**
 * The suite's one way to wait (docs/testing.md): poll a condition until it holds, never sleep for a
 * guessed time. A loaded machine only makes a wait longer, never a test wrong.
 */
export type EventuallyOptions = {
  /** Give up after this long (ms) with the check's last failure. */
  timeout?: number;
  /** Between tries (ms). */
  interval?: number;
  /** What is awaited, for the error when a check returning `false` times out. */
  what?: string;
};

/**
 * Runs `check` until it holds, and returns what it returned. A check holds when it neither throws (a
 * jest `expect` inside it, for one) nor returns `false`; a check that finds a value returns it or
 * `false` (`list.find(...) ?? false`). On timeout, throws the last error, so the failure shows the
 * assertion that never held.
 */
export async function eventually<T>(check: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Exclude<T, false>> {
  const { timeout = 15_000, interval = 50, what = "a condition" } = options;
  const deadline = Date.now() + timeout;
  for (;;) {
    let failure: unknown;
    try {
      const value = await check();
      if (value !== false) return value as Exclude<T, false>;
      failure = new Error(`timed out after ${timeout} ms waiting for ${what}`);
    } catch (error) {
      failure = error;
    }
    if (Date.now() >= deadline) throw failure;
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/**
 * `promise`, or an error naming `what` once `timeout` ms pass: a deadline on something awaited (a
 * child's output, a subscription's next message), so a test that hangs fails with a reason instead.
 */
export async function within<T>(promise: Promise<T>, timeout: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeout} ms waiting for ${what}`)), timeout);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}
