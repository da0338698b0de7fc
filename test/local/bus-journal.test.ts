/**
 * The embedded bus's journal of durable queues, on a real folder: a new bus on the same folder (as after a SIGKILL)
 * gets back every message sent and not completed, in order, unsettled ones included; completed and dead-lettered
 * ones are gone; a torn last line is skipped; the file is compacted when it grows; other entities stay in memory; a
 * full durable queue refuses a send instead of dropping the oldest.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { BusJournal } from '../../local/bus-journal';
import { BusQueueFullError, InProcessBus } from '../../local/in-process-bus';

describe('bus journal', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'test-bus-journal-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const fresh = (): string => path.join(root, `j${++n}`);
  const busOn = (dir: string, compactBytes?: number, max?: number): InProcessBus =>
    new InProcessBus({
      journal: new BusJournal({ dir, queues: ['intake'], ...(compactBytes === undefined ? {} : { compactBytes }) }),
      ...(max === undefined ? {} : { maxMessagesPerEntity: max }),
    });
  const ids = (bus: InProcessBus): string[] => bus.messages('intake').map((m) => m.messageId);

  it('a new bus on the folder gets back what was not completed, in order; memory-only entities are gone', () => {
    const dir = fresh();
    const a = busOn(dir);
    assert.equal(
      a.sendMany(
        'intake',
        ['t1', 't2', 't3', 't4'].map((id) => ({ messageId: id, body: { id } })),
        true,
      ),
      4,
    );
    a.send('intake', { messageId: 't2', body: {} }, true); // a duplicate: not sent, not journalled
    a.send('topic', { messageId: 'r1', body: {} });
    const m1 = a.receive('intake');
    const m2 = a.receive('intake');
    const m3 = a.receive('intake');
    assert.ok(m1 !== undefined && m2 !== undefined && m3 !== undefined);
    a.complete('intake', m1);
    a.deadLetterMessage('intake', m3, 'test'); // m2 stays unsettled: the process dies holding it
    const b = busOn(dir);
    assert.deepEqual(ids(b), ['t2', 't4']);
    assert.deepEqual(b.messages('intake')[0]?.body, { id: 't2' }, 'the body first sent (the duplicate was dropped)');
    assert.deepEqual(b.messages('topic'), []);
    assert.equal(b.send('intake', { messageId: 't4', body: {} }, true), false, 'replayed ids are seen');
  });

  it('skips a torn last line (a write cut by a kill)', () => {
    const dir = fresh();
    busOn(dir).send('intake', { messageId: 'ok', body: { a: 1 } }, true);
    appendFileSync(path.join(dir, 'intake.journal'), '{"s":{"messageId":"torn","bo');
    assert.deepEqual(ids(busOn(dir)), ['ok']);
  });

  it('compacts the file when it outgrows its bound, keeping what is pending', () => {
    const dir = fresh();
    const bus = busOn(dir, 4096);
    const file = path.join(dir, 'intake.journal');
    for (let i = 0; i < 200; i++) {
      bus.send('intake', { messageId: `c${i}`, body: { pad: 'x'.repeat(50) } }, true);
      const m = bus.receive('intake');
      if (m !== undefined && i % 10 !== 0) bus.complete('intake', m); // every tenth stays unsettled
    }
    assert.ok(statSync(file).size <= 4096 + 200, `bounded: ${statSync(file).size} bytes`);
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    assert.ok(lines.length < 200, 'compacted');
    assert.deepEqual(
      ids(busOn(dir)),
      Array.from({ length: 20 }, (_, i) => `c${i * 10}`),
    );
  });

  it('a full durable queue refuses a send (nothing of it sent) rather than dropping the oldest', () => {
    const dir = fresh();
    const bus = busOn(dir, undefined, 3);
    bus.sendMany(
      'intake',
      [
        { messageId: 'f1', body: 1 },
        { messageId: 'f2', body: 2 },
      ],
      true,
    );
    assert.throws(
      () =>
        bus.sendMany(
          'intake',
          [
            { messageId: 'f3', body: 3 },
            { messageId: 'f4', body: 4 },
          ],
          true,
        ),
      BusQueueFullError,
    );
    assert.deepEqual(ids(bus), ['f1', 'f2']);
    assert.deepEqual(ids(busOn(dir)), ['f1', 'f2']);
  });
});
