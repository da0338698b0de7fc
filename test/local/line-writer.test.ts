/** The local host's log writer: lines arrive in order, complete, without a synchronous write; bounded. */
import assert from 'node:assert/strict';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { AsyncLineWriter } from '../../local/line-writer';

function tempFile(): { file: string; fd: number; done: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'line-writer-'));
  const file = path.join(dir, 'out.log');
  const fd = openSync(file, 'w');
  return { file, fd, done: () => (closeSync(fd), rmSync(dir, { recursive: true, force: true })) };
}

describe('AsyncLineWriter', () => {
  it('writes nothing during the call (no synchronous write), then every line in order', async () => {
    const t = tempFile();
    try {
      const w = new AsyncLineWriter({ fd: t.fd });
      const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}`);
      for (const l of lines) w.write(l);
      assert.equal(readFileSync(t.file, 'utf8'), '', 'nothing written synchronously');
      await w.idle();
      assert.deepEqual(readFileSync(t.file, 'utf8').split('\n'), [...lines, '']);
    } finally {
      t.done();
    }
  });

  it('drops lines past its bound and says how many', async () => {
    const t = tempFile();
    try {
      const w = new AsyncLineWriter({ fd: t.fd, maxBufferedBytes: 100 });
      for (let i = 0; i < 20; i++) w.write(`0123456789-${i}`); // 13-14 chars each: 7 fit
      assert.equal(w.dropped, 13);
      await w.idle();
      const out = readFileSync(t.file, 'utf8').trimEnd().split('\n');
      assert.deepEqual(
        out.slice(0, 7),
        Array.from({ length: 7 }, (_, i) => `0123456789-${i}`),
      );
      assert.match(out[7] ?? '', /13 log line\(s\) dropped/);
      assert.equal(w.dropped, 0);
    } finally {
      t.done();
    }
  });

  it('writes what is still buffered synchronously on flushSync (process exit)', () => {
    const t = tempFile();
    try {
      const w = new AsyncLineWriter({ fd: t.fd });
      w.write('last words');
      w.flushSync();
      assert.equal(readFileSync(t.file, 'utf8'), 'last words\n');
    } finally {
      t.done();
    }
  });
});
