/**
 * Over real HTTP through the local host: chunked bodies over the cap get 413 problem+json from the
 * function; problem `type`s are relative references that this app answers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ERROR_CODES, STATUS_BY_CODE } from '../../lib/errors/errors';
import { http, type HttpAnswer } from '../support/http';
import { hostWithoutRedis } from '../support/suite-host';
import { validEvent } from '../support/events';

/** POSTs a body in chunks with `Transfer-Encoding: chunked` (no content-length). */
function postChunked(url: string, chunks: number, chunk: Buffer): Promise<HttpAnswer> {
  const headers = { 'x-deadline-ms': '10000' }; // the machine may be loaded
  return http().post(url, undefined, { chunks: Array.from({ length: chunks }, () => chunk), headers });
}

describe('HTTP safety over the local host', () => {
  const suite = hostWithoutRedis();

  it('answers 413 payload_too_large to a chunked body over the 64 KiB cap', async () => {
    const r = await postChunked(`${suite.api}/score`, 256, Buffer.alloc(4096, 0x20)); // 1 MiB of spaces, chunked
    assert.equal(r.status, 413);
    assert.match(r.type, /^application\/problem\+json/);
    assert.equal(r.json['code'], 'payload_too_large');
    assert.equal(r.json['type'], '/api/problems/payload_too_large');
  });

  it('scores a chunked body under the cap', async () => {
    const text = Buffer.from(JSON.stringify(validEvent()));
    const r = await postChunked(`${suite.api}/score`, 1, text);
    assert.equal(r.status, 200);
    assert.equal(r.json['transactionId'], 'tx-0001');
  });

  it('answers every problem type URI with its description', async () => {
    for (const code of ERROR_CODES) {
      const res = await fetch(`${suite.api}/problems/${code}`);
      assert.equal(res.status, 200, code);
      const d = (await res.json()) as Record<string, unknown>;
      assert.equal(d['code'], code);
      assert.equal(d['status'], STATUS_BY_CODE[code]);
      assert.equal(d['type'], `/api/problems/${code}`);
      assert.ok(typeof d['description'] === 'string' && d['description'].length > 10, code);
    }
  });

  it('gives problems a relative type that resolves to this app', async () => {
    const bad = await http().post(`${suite.api}/score`, '{"transactionId": ');
    assert.equal(bad.json['type'], '/api/problems/invalid_json');
    const doc = await fetch(new URL(bad.json['type'] as string, `${suite.api}/score`));
    assert.equal(doc.status, 200);
    assert.equal(((await doc.json()) as { code: string }).code, 'invalid_json');
    const unknown = await fetch(`${suite.api}/problems/no_such_code`);
    assert.equal(unknown.status, 404);
    const p = (await unknown.json()) as { code: string; type: string };
    assert.deepEqual([p.code, p.type], ['not_found', '/api/problems/not_found']);
  });
});
