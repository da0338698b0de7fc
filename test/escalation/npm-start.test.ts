import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { FakeOpenAI } from '../support/openai-peer';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { startLocalHost } from '../support/local-host';

describe('npm start with AZURE_OPENAI_* set against a stand-in', () => {
  it('escalates an "analysis": "deep" request; with the server failing, falls back and opens after 5 failures', async () => {
    const fake = await FakeOpenAI.create();
    const { child, url, output } = await startLocalHost({
      set: {
        AZURE_OPENAI_ENDPOINT: fake.endpoint,
        AZURE_OPENAI_DEPLOYMENT: 'gpt-4o-mini',
        AZURE_OPENAI_API_KEY: 'local-test-key',
        ESCALATION_MAX_SHARE: '1', // every deep request may escalate (the default 5 % would cap a handful of requests)
        REQUEST_DEADLINE_MS: '5000', // the deadline is not under test; a loaded machine must not 503
      },
      unset: ['AZURE_CLIENT_ID'],
    }).catch(async (err: unknown) => {
      await fake.close();
      throw err;
    });
    try {
      const example = readFileSync(path.resolve(__dirname, '../../../examples/payment-deep.json'), 'utf8');
      const score = async (i: number): Promise<Record<string, unknown>> => {
        const res = await fetch(`${url}/score`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body:
            i === 0
              ? example // the README's example
              : JSON.stringify(validEvent({ transactionId: `tx-${i}`, userId: `user-${i}`, analysis: 'deep' })),
        });
        assert.equal(res.status, 200);
        return (await res.json()) as Record<string, unknown>;
      };
      const outcome = (r: Record<string, unknown>): unknown => (r['escalation'] as { outcome?: unknown }).outcome;

      const ok = await score(0);
      assert.equal(ok['source'], 'openai');
      assert.equal(outcome(ok), 'ok');
      assert.equal(fake.count, 1);
      assert.equal(fake.requests[0]?.headers['api-key'], 'local-test-key');
      assert.ok(!(fake.requests[0]?.body ?? '').includes('user-42'), 'the prompt holds the user hash only');

      fake.set({ mode: 'server-error' });
      for (let i = 1; i <= 5; i++) {
        const r = await score(i);
        assert.equal(r['source'], 'local-fallback');
        assert.equal(outcome(r), 'server_error');
      }
      assert.equal(fake.count, 6);
      const open = await score(6);
      assert.equal(open['source'], 'local-fallback');
      assert.equal(outcome(open), 'breaker_open');
      assert.equal(fake.count, 6, 'nothing sent while the breaker is open');
      assert.match(output(), /"msg":"llm escalation breaker open"/);
      assert.ok(!output().includes('local-test-key'), 'the key never reaches the log');
    } finally {
      await stopChild(child, 'npm start to exit after SIGTERM');
      await fake.close();
    }
  });
});
