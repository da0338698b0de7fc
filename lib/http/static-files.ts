/**
 * Serves a folder of built assets (the analysts' console, dist/console) from memory: read once at start, bounded
 * in count and bytes, each file with its content type, a strong ETag (304 on a match) and security headers that
 * keep the page to its own origin (CSP without inline scripts, no framing, no MIME sniffing).
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
};

/** Headers every answer carries. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** A file name that may be asked for: one path segment of safe characters (no `..`, no folders). */
const NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/;

interface Asset {
  readonly body: Buffer;
  readonly type: string;
  readonly etag: string;
}

/** An answer: status, headers, and the body (absent on 304 and 404). */
export interface StaticAnswer {
  readonly status: 200 | 304 | 404;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
}

/** The limits of what is held. */
export interface StaticLimits {
  readonly maxFiles: number;
  readonly maxBytes: number;
}

/** A folder's files, held in memory. */
export class StaticFiles {
  private constructor(
    private readonly files: ReadonlyMap<string, Asset>,
    private readonly index: string,
  ) {}

  /**
   * Reads the files of `dir` (not its sub-folders) whose type is known.
   * @throws Error when the folder holds more than the limits allow (a build that went wrong, not a request).
   */
  static async create(
    dir: string,
    limits: StaticLimits = { maxFiles: 200, maxBytes: 8 << 20 },
    index = 'index.html',
  ): Promise<StaticFiles> {
    const files = new Map<string, Asset>();
    let bytes = 0;
    let entries: string[] = [];
    try {
      entries = (await fs.readdir(dir, { withFileTypes: true })).filter((e) => e.isFile()).map((e) => e.name);
    } catch {
      // no built console: every path answers 404
    }
    for (const name of entries.sort()) {
      const type = TYPES[path.extname(name)];
      if (type === undefined || !NAME.test(name)) continue;
      const body = await fs.readFile(path.join(dir, name));
      bytes += body.length;
      if (files.size + 1 > limits.maxFiles || bytes > limits.maxBytes)
        throw new Error(`${dir} holds more than ${limits.maxFiles} files or ${limits.maxBytes} bytes`);
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
      files.set(name, { body, type, etag });
    }
    return new StaticFiles(files, index);
  }

  /** The answer for `name` (empty: the index), given the request's `If-None-Match`. */
  get(name: string | undefined, ifNoneMatch: string | null): StaticAnswer {
    const key = name === undefined || name === '' ? this.index : name;
    const a = NAME.test(key) ? this.files.get(key) : undefined;
    if (a === undefined) return { status: 404, headers: { ...SECURITY_HEADERS, 'cache-control': 'no-store' } };
    // revalidate every time: a deployment changes the files under the same names
    const headers = { ...SECURITY_HEADERS, 'content-type': a.type, etag: a.etag, 'cache-control': 'no-cache' };
    if (ifNoneMatch !== null && ifNoneMatch.split(',').some((t) => t.trim() === a.etag))
      return { status: 304, headers };
    return { status: 200, headers, body: a.body };
  }
}
