/** Calls every handler of the same event in turn (e.g. the logger's and telemetry's). */
export function combineHandlers<T extends object>(...parts: (Partial<T> | undefined)[]): Partial<T> {
  const out: Record<string, (...args: unknown[]) => void> = {};
  for (const part of parts) {
    for (const [name, fn] of Object.entries(part ?? {}) as [string, (...args: unknown[]) => void][]) {
      const prev = out[name];
      out[name] = prev === undefined ? fn : (...args) => (prev(...args), fn(...args));
    }
  }
  return out as Partial<T>;
}
