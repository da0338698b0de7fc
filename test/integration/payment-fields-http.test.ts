/**
 * The fraud-signal fields under `npm start` (issue 37 item 1): a payment with email, IP address, card
 * { bin, last4, fingerprint }, addresses, user agent and metadata is scored (200); a card number, an unknown
 * nested field or a card number inside metadata is a 400 naming the field; the decision log holds the personal
 * fields only as keyed hashes (one per address, whatever its spelling); the host's output never holds them raw.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { DecisionRecord } from '../../lib/learning/decision-record';
import { stopChild } from '../support/child-process';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';
import { RICH, richEvent } from '../support/rich-event';

const EXAMPLES = path.resolve(__dirname, '../../../examples');

interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}

/** Every line of every decision log file under `dir`. */
function logText(dir: string): string {
  if (!existsSync(dir)) return ''; // the log's folder is made by its first flush
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter(
    (e) => e.isFile() && e.name.endsWith('.jsonl'),
  );
  return files.map((f) => readFileSync(path.join(f.parentPath, f.name), 'utf8')).join('');
}

describe('fraud-signal fields under npm start', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-payment-fields-'));
  let host: LocalHost;
  const post = async (body: unknown): Promise<Answer> => {
    const res = await fetch(`${host.url}/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  };
  const refused = (a: Answer, field: string): void => {
    assert.equal(a.status, 400, JSON.stringify(a.json));
    assert.equal(a.json['code'], 'validation_failed');
    assert.deepEqual(
      ((a.json['errors'] ?? []) as { path: string }[]).map((e) => e.path),
      [field],
    );
  };

  before(async () => {
    host = await startCaseHost(dir);
  });
  after(async () => {
    await stopChild(host.child, 'npm start to exit after SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('scores a payment with every new field, and the example payment with them', async () => {
    const r = await post(richEvent({ transactionId: 'tx-rich-1', note: `reach me at ${RICH.email}` }));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.ok(['approve', 'review', 'decline'].includes(r.json['decision'] as string));
    const again = await post(
      richEvent({
        transactionId: 'tx-rich-2',
        email: 'Jane.Doe+shop@EXAMPLE.com',
        ipAddress: '2001:db8:0:0::1',
        card: undefined,
        cardFingerprint: RICH.fingerprint,
      }),
    );
    assert.equal(again.status, 200, JSON.stringify(again.json));
    const example = await post(readFileSync(path.join(EXAMPLES, 'payment-rich.json'), 'utf8'));
    assert.equal(example.status, 200, JSON.stringify(example.json));
  });

  it('refuses a card number, unknown nested fields and a card number in metadata, naming the field', async () => {
    refused(await post(richEvent({ cardNumber: '4111111111111111' })), 'cardNumber');
    refused(await post(richEvent({ card: { bin: '411111', cvv: '123' } })), 'card.cvv');
    refused(await post(richEvent({ billingAddress: { country: 'FR', street: '1 rue X' } })), 'billingAddress.street');
    refused(await post(richEvent({ card: { fingerprint: '4111 1111 1111 1111' } })), 'card.fingerprint');
    refused(await post(richEvent({ metadata: { ref: 'card 4111-1111-1111-1111' } })), 'metadata.ref');
    refused(await post(richEvent({ cardFingerprint: 'fp_other' })), 'card.fingerprint');
  });

  it('logs the personal fields as keyed hashes only: one hash per email or IP address, whatever the spelling', async () => {
    const logDir = path.join(dir, 'decisions');
    const records = await eventually(
      async () => {
        const text = logText(logDir);
        return text
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as DecisionRecord);
      },
      (rs) => ['tx-rich-1', 'tx-rich-2'].every((tx) => rs.some((r) => r.transactionId === tx)),
      'the decision log records of tx-rich-1 and tx-rich-2',
    );
    const text = logText(logDir);
    for (const raw of [RICH.email, 'example.com', '2001:db8::1', RICH.ipAddress, RICH.fingerprint, 'AppleWebKit'])
      assert.ok(!text.toLowerCase().includes(raw.toLowerCase()), `${raw} in the decision log`);
    for (const raw of ['75011', 'black-friday', 'reach me', '"last4"']) assert.ok(!text.includes(raw), raw);
    const [a, b] = ['tx-rich-1', 'tx-rich-2'].map((tx) => records.find((r) => r.transactionId === tx));
    assert.match(String(a?.event['email']), /^h_[0-9a-f]{32}$/);
    assert.equal(a?.event['email'], b?.event['email'], 'same email, other domain case: same hash');
    assert.equal(a?.event['ipAddress'], b?.event['ipAddress'], 'same IPv6 address, other spelling: same hash');
    assert.equal(a?.event['cardFingerprint'], b?.event['cardFingerprint'], 'card.fingerprint fills cardFingerprint');
    assert.deepEqual(Object.keys(a?.event['card'] ?? {}).sort(), ['bin', 'fingerprint']);
  });

  it("the host's output never holds the raw email, IP address, card fingerprint or user agent", () => {
    const out = host.output();
    assert.ok(out.includes('Listening on'), 'the output was captured');
    for (const raw of [RICH.email, 'jane.doe', '2001:db8::1', RICH.ipAddress, RICH.fingerprint, 'AppleWebKit'])
      assert.ok(!out.toLowerCase().includes(raw.toLowerCase()), `${raw} in the output`);
  });
});
