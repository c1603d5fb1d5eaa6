// Capped exponential backoff with full jitter: a uniform delay below
// min(cap, base * 2^attempt), so that many clients dropped at the same
// moment do not come back at the same moment.

export interface BackoffOptions {
  /** First ceiling, ms (default 250). */
  base?: number;
  /** Largest ceiling, ms (default 10000). */
  cap?: number;
}

export class Backoff {
  readonly base: number;
  readonly cap: number;
  private attempt = 0;

  constructor({ base = 250, cap = 10_000 }: BackoffOptions = {}, private readonly random: () => number = Math.random) {
    if (!(base > 0) || !(cap >= base)) throw new RangeError('backoff needs 0 < base <= cap');
    this.base = base;
    this.cap = cap;
  }

  /** The next delay, ms. */
  next(): number {
    const ceiling = Math.min(this.cap, this.base * 2 ** Math.min(this.attempt, 32));
    this.attempt += 1;
    return this.random() * ceiling;
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
