/**
 * A small map of JSON values kept in one file: what the in-process pointer stores (model fleet pointer, ruleset
 * pointer) use on embedded defaults, so that a promote or rollback survives a restart as it does on Redis. The file
 * is read once when the map is opened and rewritten whole, atomically (a temporary file renamed over it), on every
 * change: changes are rare admin actions and the values are small. A missing or unreadable file opens an empty map
 * (reported through `onError`); a failed write is reported and leaves the previous file in place.
 * @module
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/** Most entries a {@link JsonFileMap} keeps; setting another one beyond it is refused (the file stays small). */
export const JSON_FILE_MAP_MAX_ENTRIES = 1000;

/** One file of named JSON values. */
export class JsonFileMap<T> {
  private readonly values: Map<string, T>;

  /**
   * Opens (or starts) the map in `file`.
   * @param onError told when the file cannot be read (a fresh map is used) or written (the change stays in memory).
   */
  constructor(
    readonly file: string,
    private readonly onError: (message: string) => void = () => undefined,
  ) {
    this.values = new Map();
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        onError(`${file} cannot be read: ${(err as Error).message}`);
    }
    if (text === undefined) return;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      for (const [k, v] of Object.entries(parsed as Record<string, T>).slice(0, JSON_FILE_MAP_MAX_ENTRIES))
        this.values.set(k, v);
    } catch (err) {
      onError(`${file} is not a JSON object (${(err as Error).message}); starting empty`);
    }
  }

  get(key: string): T | undefined {
    return this.values.get(key);
  }

  entries(): IterableIterator<[string, T]> {
    return this.values.entries();
  }

  /** Sets `key` and rewrites the file. @returns false when the map is full and `key` is new (nothing changes). */
  set(key: string, value: T): boolean {
    if (!this.values.has(key) && this.values.size >= JSON_FILE_MAP_MAX_ENTRIES) return false;
    this.values.set(key, value);
    try {
      mkdirSync(path.dirname(this.file), { recursive: true });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.values)));
      renameSync(tmp, this.file);
    } catch (err) {
      this.onError(`${this.file} cannot be written: ${(err as Error).message}`);
    }
    return true;
  }
}
