/** Authentication of the escalation client (no Azure here: a loopback stand-in, a local HTTPS vault, an injected credential). */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TokenCredential } from '@azure/identity';
import { MeterProvider, MetricReader, type DataPoint } from '@opentelemetry/sdk-metrics';
import { Telemetry } from '../../lib/telemetry/telemetry';
import { FakeOpenAI } from '../support/openai-peer';
import { startKeyVaultPeer } from '../support/key-vault-peer';
import { deep, escalatorFor, localResult } from './support/escalator';

describe('escalation client authentication', () => {
  let fake: FakeOpenAI;
  before(async () => (fake = await FakeOpenAI.create()));
  after(() => fake.close());

  it('Entra: a bearer token for Cognitive Services and no api-key, even with a stray key and base URL in the environment', async () => {
    const saved = { key: process.env['AZURE_OPENAI_API_KEY'], base: process.env['OPENAI_BASE_URL'] };
    process.env['AZURE_OPENAI_API_KEY'] = 'stray-env-key';
    process.env['OPENAI_BASE_URL'] = 'http://127.0.0.1:9/stray';
    try {
      const scopes: string[] = [];
      const credential: TokenCredential = {
        getToken: (s) => (
          scopes.push([s].flat().join(' ')),
          Promise.resolve({ token: 'aoai-token', expiresOnTimestamp: Date.now() + 3_600_000 })
        ),
      };
      // no AZURE_OPENAI_API_KEY setting: the plan is Entra
      const { escalator } = escalatorFor(fake, { AZURE_OPENAI_API_KEY: '', AZURE_CLIENT_ID: 'mi-1' }, { credential });
      const r = await escalator.review(deep(), localResult());
      assert.equal(r.escalation?.outcome, 'ok', r.escalation?.reason);
      const h = fake.requests.at(-1)?.headers;
      assert.equal(h?.['authorization'], 'Bearer aoai-token');
      assert.equal(h?.['api-key'], undefined);
      assert.deepEqual(scopes, ['https://cognitiveservices.azure.com/.default']);
    } finally {
      for (const [k, v] of [
        ['AZURE_OPENAI_API_KEY', saved.key],
        ['OPENAI_BASE_URL', saved.base],
      ] as const)
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
  });

  it('Key Vault: the key read through the real SecretClient from a local HTTPS vault is sent as api-key', async () => {
    const vault = await startKeyVaultPeer(() => 'key-from-vault');
    try {
      const credential: TokenCredential = {
        getToken: () => Promise.resolve({ token: 'kv-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
      };
      const { escalator } = escalatorFor(
        fake,
        {
          AZURE_OPENAI_API_KEY: '',
          KEY_VAULT_URL: vault.url,
          AZURE_OPENAI_KEY_SECRET_NAME: 'aoai-key',
        },
        {
          credential,
          secretClientOptions: vault.secretClientOptions,
        },
      );
      const r = await escalator.review(deep(), localResult());
      assert.equal(r.escalation?.outcome, 'ok', r.escalation?.reason);
      assert.equal(fake.requests.at(-1)?.headers['api-key'], 'key-from-vault');
      assert.equal(fake.requests.at(-1)?.headers['authorization'], undefined);
      await escalator.review(deep(), localResult());
      assert.deepEqual(
        vault.seen,
        ['GET /secrets/aoai-key/ anonymous', 'GET /secrets/aoai-key/ Bearer kv-token'],
        'read once',
      );
    } finally {
      await vault.close();
    }
  });
});

class TestReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

describe('escalation telemetry', () => {
  it('turns escalation and breaker events into metrics (outcome, tokens, cost, transitions)', async () => {
    const reader = new TestReader();
    const t = await Telemetry.create({ meterProvider: new MeterProvider({ readers: [reader] }) });
    const on = t.escalationEvents();
    const base = { triggers: ['requested'] as const, latencyMs: 210, model: 'gpt-4o-mini' };
    on.escalated?.({ ...base, outcome: 'ok', promptTokens: 200, completionTokens: 30, costUsd: 0.00005 });
    on.escalated?.({ ...base, outcome: 'breaker_open', promptTokens: 0, completionTokens: 0, costUsd: 0 });
    on.breakerStateChanged?.({ state: 'open', previous: 'closed', openForMs: 30_000 });
    const { resourceMetrics } = await reader.collect();
    const metric = (name: string): DataPoint<unknown>[] =>
      (resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name)?.dataPoints ??
        []) as DataPoint<unknown>[];
    assert.deepEqual(
      metric('scoring.escalations')
        .map((p) => `${String(p.attributes['outcome'])}=${String(p.value)}`)
        .sort(),
      ['breaker_open=1', 'ok=1'],
    );
    assert.deepEqual(
      metric('scoring.escalation.tokens')
        .map((p) => `${String(p.attributes['kind'])}=${String(p.value)}`)
        .sort(),
      ['completion=30', 'prompt=200'],
    );
    assert.equal(metric('scoring.escalation.cost')[0]?.value, 0.00005);
    assert.equal(metric('scoring.breaker.transitions')[0]?.attributes['to'], 'open');
    assert.equal(metric('scoring.breaker.open')[0]?.value, 1);
  });
});
