/** Structured logger. Callers pass fields, never request bodies: payment data and secrets stay out of logs. */

/** Log levels, least to most severe. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Extra structured fields of a log line. */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined | readonly string[]>>;

/** A leveled, structured logger. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * Keys whose values are always replaced by `[redacted]`, whatever a caller passes: secrets, and the payment's
 * personal fields (card, note, email, IP and postal addresses, user agent, metadata).
 */
const SECRET_KEY =
  /pass(word)?|secret|token|key|connection|authorization|card|pan|note|email|address|agent|postal|metadata/i;

/** Replaces values of secret-looking keys by `[redacted]`. */
export function redact(fields: LogFields | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (fields === undefined) return out;
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) out[k] = SECRET_KEY.test(k) ? '[redacted]' : v;
  return out;
}

/**
 * A logger writing one JSON object per line.
 * @param level minimum level written; default `info`.
 * @param write sink for a line; default `console.log` / `console.error` (warn and above).
 */
export function createJsonLogger(level: LogLevel = 'info', write?: (line: string, level: LogLevel) => void): Logger {
  const sink =
    write ?? ((line: string, l: LogLevel) => (ORDER[l] >= ORDER.warn ? console.error(line) : console.log(line)));
  const emit = (l: LogLevel, msg: string, fields?: LogFields): void => {
    if (ORDER[l] < ORDER[level]) return;
    sink(JSON.stringify({ time: new Date().toISOString(), level: l, msg, ...redact(fields) }), l);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
