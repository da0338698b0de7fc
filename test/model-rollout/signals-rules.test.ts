/**
 * Issue 37's "Must show" under `npm start`'s embedded defaults: upload a signals version that adds `card_users_1h`
 * (distinct users per card fingerprint over an hour), then a ruleset version with
 * `signals.card_users_1h >= 3 → review` (the files in examples/signals/). Payments from three users with one card:
 * the third is `review`, naming the rule; a payment on another card is not. A payment with every fraud-signal
 * field gets 200; one with `cardNumber` gets 400. A ruleset that reads a signal the serving version lacks is
 * refused, naming the rule and the column.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SignalsStatus } from '../../lib/signals/signals-rollout';
import type { ScoreResult } from '../../lib/scoring/result';
import { validEvent } from '../support/events';
import { startEmbeddedRollout, type EmbeddedRollout } from './support/embedded-rollout';
import { eventually } from './support/eventually';

const ROOT = path.resolve(__dirname, '../../..');
let rollout: EmbeddedRollout;

/** Copies an example file where an upload of `kind` lands in the models folder. */
async function upload(example: string, target: string): Promise<void> {
  const to = path.join(rollout.folder.dir, target);
  await fs.mkdir(path.dirname(to), { recursive: true });
  await fs.copyFile(path.join(ROOT, 'examples', 'signals', example), to);
}

async function score(body: Record<string, unknown>): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${rollout.api}/score`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const getJson = async <T>(route: string): Promise<T> => {
  const res = await fetch(`${rollout.api}${route}`);
  assert.equal(res.status, 200, route);
  return (await res.json()) as T;
};

before(async () => {
  rollout = await startEmbeddedRollout();
});
after(() => rollout.dispose());

describe('signals and rules under npm start', () => {
  it('a payment with every fraud-signal field gets 200; one with cardNumber gets 400', async () => {
    const rich = JSON.parse(await fs.readFile(path.join(ROOT, 'examples', 'payment-rich.json'), 'utf8')) as object;
    assert.equal((await score({ ...rich, transactionId: 'tx-rich-1' })).status, 200);
    const bad = await score({ ...validEvent({ transactionId: 'tx-pan-1' }), cardNumber: '4111111111111111' });
    assert.equal(bad.status, 400);
  });

  it('a ruleset reading a signal the serving version lacks is refused, naming the rule and the column', async () => {
    await upload('fraud-rules-1.1.0.json', 'rulesets/fraud-rules/1.1.0.json');
    const refused = await eventually(
      () =>
        getJson<{ rejections: { version: string; errors: { path: string; message: string }[] }[] }>(
          '/rulesets/fraud-rules',
        ),
      (s) => s.rejections.some((r) => r.version === '1.1.0'),
      'the refusal of ruleset 1.1.0 (signals 1.0.0 serve: no card_users_1h)',
      30_000,
    );
    const errors = refused.rejections.find((r) => r.version === '1.1.0')?.errors ?? [];
    assert.ok(
      errors.some(
        (e) => /^rules\.\d+\.when$/.test(e.path) && /card-shared-1h/.test(e.message) && /column \d+/.test(e.message),
      ),
      JSON.stringify(errors),
    );
    await fs.rm(path.join(rollout.folder.dir, 'rulesets', 'fraud-rules', '1.1.0.json'));
  });

  it('signals 1.1.0 then ruleset 1.1.0: the third user on one card within the hour is review, naming the rule', async () => {
    await upload('default-1.1.0.json', 'features/default/1.1.0.json');
    await eventually(
      () => getJson<SignalsStatus>('/signals/default'),
      (s) => s.serving === '1.1.0',
      'signals 1.1.0 serving',
      30_000,
    );
    // a new version number: 1.1.0 was refused above (a refused version is not retried)
    const doc = JSON.parse(
      await fs.readFile(path.join(ROOT, 'examples', 'signals', 'fraud-rules-1.1.0.json'), 'utf8'),
    ) as Record<string, unknown>;
    const to = path.join(rollout.folder.dir, 'rulesets', 'fraud-rules', '1.1.1.json');
    await fs.writeFile(to, JSON.stringify({ ...doc, version: '1.1.1' }));
    await eventually(
      () => getJson<{ serving?: string }>('/rulesets/fraud-rules'),
      (s) => s.serving === '1.1.1',
      'ruleset 1.1.1 serving',
      30_000,
    );
    const pay = (user: string, card: string, n: number) =>
      score(validEvent({ transactionId: `tx-card-${user}-${n}`, userId: user, cardFingerprint: card }));
    const first = await pay('u-a', 'tok_shared', 1);
    const second = await pay('u-b', 'tok_shared', 1);
    const other = await pay('u-c', 'tok_other', 1);
    const third = await pay('u-c', 'tok_shared', 2);
    for (const r of [first, second, other, third]) assert.equal(r.status, 200, JSON.stringify(r.json));
    const fired = (r: { json: Record<string, unknown> }): string[] =>
      ((r.json as unknown as ScoreResult).rules ?? []).map((x) => x.id);
    assert.ok(!fired(first).includes('card-shared-1h') && !fired(second).includes('card-shared-1h'));
    assert.ok(!fired(other).includes('card-shared-1h'), 'another card: one user');
    assert.equal(third.json['decision'], 'review', JSON.stringify(third.json));
    assert.ok(fired(third).includes('card-shared-1h'), JSON.stringify(third.json));
    // a retry of the third payment is not counted twice, and answers the same
    const retry = await pay('u-c', 'tok_shared', 2);
    assert.deepEqual(fired(retry), fired(third));
  });
});
