/**
 * Where the decision log and the labels live: one interface, two implementations (a local folder under
 * `npm start`, Blob Storage in Azure), one contract suite (test/learning/store-contract.test.ts).
 *
 * Names are `/`-separated paths: `decisions/YYYY/MM/DD/HH/{writer}.jsonl` (JSON Lines, one record a line,
 * partitioned by the hour of the decision) and `labels/{xx}/{sha256}.json` (one object per transaction and label).
 */
export interface LearningStore {
  /** Appends text (whole JSON lines) to `name`, creating it if absent. */
  append(name: string, text: string): Promise<void>;
  /** Creates `name` with `text` only if it does not exist. @returns true if created, false if it existed. */
  createIfAbsent(name: string, text: string): Promise<boolean>;
  /** Every name under `prefix` (a folder path ending in `/`), sorted. */
  list(prefix: string): Promise<string[]>;
  /** The text of `name`, or `undefined` if absent. */
  read(name: string): Promise<string | undefined>;
  /** Replaces the text of `name` (deletes it when `text` is empty). */
  replace(name: string, text: string): Promise<void>;
  dispose(): Promise<void>;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** The hour folder of a time: `decisions/YYYY/MM/DD/HH/` (UTC). */
export function hourPrefix(ms: number): string {
  const d = new Date(ms);
  return `decisions/${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${pad(d.getUTCHours())}/`;
}

/** The hour folders from `fromMs` (inclusive) to `toMs` (exclusive), in order. */
export function hourPrefixes(fromMs: number, toMs: number): string[] {
  const out: string[] = [];
  for (let t = Math.floor(fromMs / 3_600_000) * 3_600_000; t < toMs; t += 3_600_000) out.push(hourPrefix(t));
  return out;
}

/** A writer name safe in a path (instance ids may hold any character). */
export function writerName(instance: string): string {
  return instance.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 100) || 'instance';
}
