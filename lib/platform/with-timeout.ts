/** Raised by {@link withTimeout} when the budget runs out. */
export class BudgetExceededError extends Error {
  override readonly name = 'BudgetExceededError';
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/**
 * Settles like `p`, or rejects with {@link BudgetExceededError} after `ms`, whichever comes first. `p`
 * keeps running; its late outcome is ignored (never an unhandled rejection).
 */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new BudgetExceededError(ms)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}
