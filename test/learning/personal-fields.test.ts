/**
 * The fraud-signal fields in the decision log and its erasure: email, IP address, user agent, card fingerprint
 * and postal codes are logged only as keyed hashes, `card.last4`, `metadata` and `note` not at all; erasing a
 * user removes their records and strips their email, IP address and card from other users' records
 * (`npm run learning:erase`, with `--email` / `--ip` / `--card` too), leaving everything else as it was.
 */
import { loadConfig, type Config } from '../../lib/config/config';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEV_DECISION_LOG_HASH_KEY } from '../../lib/config/learning-settings';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { parseRecords } from '../../lib/learning/decision-reader';
import { toDecisionRecord, type DecisionRecord } from '../../lib/learning/decision-record';
import { unreplayableFields } from '../../lib/learning/backtest';
import { eraseUser } from '../../lib/learning/erase';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { KeyedHash } from '../../lib/platform/keyed-hash';
import { hourPrefix } from '../../lib/learning/learning-store';
import type { DecidedPayment } from '../../lib/scoring/scorer';
import { eraseCommand } from '../../lib/commands/erase-command';
import { RICH, richEvent } from '../support/rich-event';

/** The settings the offline commands read, as their scripts read them (from the environment this test sets). */
const env = (): Config => loadConfig(process.env);

const hash = new KeyedHash(DEV_DECISION_LOG_HASH_KEY);
const AT = Date.parse('2026-12-01T10:00:00Z');

/** The record the decision log writes for `event` (scored by hand: the log's input, not the model, is tested). */
function record(event: Record<string, unknown>): DecisionRecord {
  const e = parsePaymentEvent(event);
  const decided = {
    event: e,
    row: new Float32Array([0.5]),
    velocity: { count1m: 0, count1h: 0, count24h: 0, sum24h: 0, distinctCountries24h: 0 },
    manifest: { features: [{ name: 'amount_log' }] },
    result: {
      transactionId: e.transactionId,
      model: { name: 'fraud', version: '1.0.0' },
      score: 0.1,
      decision: 'approve',
      source: 'local',
      reasons: [],
    },
  };
  return toDecisionRecord(decided as unknown as DecidedPayment, hash, AT);
}

describe('fraud-signal fields in the decision log', () => {
  it('personal fields are keyed hashes; last4, metadata and note are left out; bin and countries kept', () => {
    const r = record(richEvent({ note: `call me at ${RICH.email}` }));
    const line = JSON.stringify(r);
    for (const raw of [RICH.email, 'example.com', 'Jane.Doe', '2001:db8::1', RICH.fingerprint, RICH.userAgent])
      assert.ok(!line.toLowerCase().includes(raw.toLowerCase()), `${raw} logged in clear`);
    for (const raw of ['75011', '10115', 'last4', 'black-friday', 'campaign', 'call me'])
      assert.ok(!line.includes(raw), raw);
    assert.equal(r.event['email'], hash.of('Jane.Doe+shop@example.com'), 'the normalised email, hashed');
    assert.equal(r.event['ipAddress'], hash.of('2001:db8::1'), 'the canonical IP, hashed');
    assert.equal(r.event['userAgent'], hash.of(RICH.userAgent));
    assert.equal(r.event['cardFingerprint'], hash.of(RICH.fingerprint), 'filled from card.fingerprint');
    assert.deepEqual(r.event['card'], { bin: '411111', fingerprint: hash.of(RICH.fingerprint) });
    assert.deepEqual(r.event['billingAddress'], { country: 'FR', postalCode: hash.of('75011') });
    assert.deepEqual(r.event['shippingAddress'], { country: 'DE', postalCode: hash.of('10115') });
    assert.equal(r.event['metadata'], undefined);
    assert.equal(r.event['note'], undefined);
    assert.deepEqual([...r.hashed].sort(), [
      'billingAddress.postalCode',
      'card.fingerprint',
      'cardFingerprint',
      'deviceId',
      'email',
      'ipAddress',
      'sessionId',
      'shippingAddress.postalCode',
      'userAgent',
      'userId',
    ]);
  });

  it('a card with only last4 leaves no card object; an event without the new fields logs as before', () => {
    const r = record(richEvent({ card: { last4: '4242' }, shippingAddress: undefined }));
    assert.equal(r.event['card'], undefined);
    assert.equal(r.event['shippingAddress'], undefined);
    const plain = record({ ...richEvent(), email: undefined, ipAddress: undefined, card: undefined });
    assert.ok(!('email' in plain.event) && !('card' in plain.event) && !plain.hashed.includes('email'));
  });
});

describe('backtest: rules on the new fields', () => {
  it('a rule reading a hashed or omitted new field is not replayable; one on card.bin or a country is', () => {
    assert.deepEqual(unreplayableFields('event.email.endsWith("@example.com")'), ['email']);
    assert.deepEqual(unreplayableFields('event.ipAddress == "203.0.113.7"'), ['ipAddress']);
    assert.deepEqual(unreplayableFields('event.card.fingerprint == "fp"'), ['card.fingerprint']);
    assert.deepEqual(unreplayableFields('event.card.last4 == "4242"'), ['card.last4']);
    assert.deepEqual(unreplayableFields('event.metadata.giftWrap'), ['metadata']);
    assert.deepEqual(unreplayableFields('has(event.email) && event.card.bin.startsWith("4")'), []);
    assert.deepEqual(unreplayableFields('event.billingAddress.country != event.shippingAddress.country'), []);
  });
});

describe('erasure follows the email, IP address and card', () => {
  let dir: string;
  let store: FolderLearningStore;
  const saved = { ...process.env };
  const name = `${hourPrefix(AT)}w1.jsonl`;
  const other = `${hourPrefix(AT + 3_600_000)}w1.jsonl`;

  // alice (erased), bob shares her card, carol her IP address, dave nothing
  const alice = (tx: string) => richEvent({ transactionId: tx, userId: 'alice' });
  const bob = richEvent({
    transactionId: 'tx-bob',
    userId: 'bob',
    email: 'bob@example.org',
    ipAddress: '198.51.100.2',
  });
  const carol = richEvent({
    transactionId: 'tx-carol',
    userId: 'carol',
    email: 'carol@example.org',
    ipAddress: '2001:db8:0::1',
    card: { bin: '555555', fingerprint: 'fp_carol' },
  });
  const dave = richEvent({
    transactionId: 'tx-dave',
    userId: 'dave',
    email: 'dave@example.org',
    ipAddress: '192.0.2.9',
    card: { fingerprint: 'fp_dave' },
  });

  async function write(): Promise<void> {
    await fs.rm(path.join(dir, 'decisions'), { recursive: true, force: true });
    const lines = (es: Record<string, unknown>[]) => es.map((e) => JSON.stringify(record(e))).join('\n') + '\n';
    await store.append(name, lines([alice('tx-a1'), bob, dave]));
    await store.append(other, lines([alice('tx-a2'), carol]));
  }
  const read = async (n: string) => parseRecords((await store.read(n)) ?? '');
  const byTx = async () => new Map([...(await read(name)), ...(await read(other))].map((r) => [r.transactionId, r]));

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'personal-fields-'));
    store = new FolderLearningStore(dir);
    process.env['DECISION_LOG_DIR'] = dir;
    delete process.env['DECISION_LOG_HASH_KEY'];
    delete process.env['CASE_STORE'];
    delete process.env['AzureWebJobsStorage'];
  });
  after(async () => {
    process.env = saved;
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("erasing a user removes their records and strips their email, IP and card from others'", async () => {
    await write();
    const dave0 = (await byTx()).get('tx-dave');
    const erased = await eraseUser(store, hash.of('alice'));
    assert.deepEqual(erased, { partitions: 2, records: 2, labels: 0, rewritten: 2 });
    const after = await byTx();
    assert.deepEqual([...after.keys()].sort(), ['tx-bob', 'tx-carol', 'tx-dave']);
    const b = after.get('tx-bob') as DecisionRecord;
    assert.equal(b.event['cardFingerprint'], undefined, "bob's record loses alice's card");
    assert.deepEqual(b.event['card'], { bin: '411111' });
    assert.ok(!b.hashed.includes('cardFingerprint') && !b.hashed.includes('card.fingerprint'));
    assert.equal(b.event['email'], hash.of('bob@example.org'), 'his own email stays');
    const c = after.get('tx-carol') as DecisionRecord;
    assert.equal(c.event['ipAddress'], undefined, "carol's record loses alice's IP (same address, other spelling)");
    assert.equal(c.event['cardFingerprint'], hash.of('fp_carol'));
    assert.deepEqual(after.get('tx-dave'), dave0, 'a record with nothing of hers is untouched');
    const text = (await store.read(name)) + ((await store.read(other)) ?? '');
    for (const h of [hash.of('alice'), hash.of('Jane.Doe+shop@example.com'), hash.of('2001:db8::1')])
      assert.ok(!text.includes(h), 'none of her hashes is left');
  });

  it('learning:erase --email / --ip / --card strip those values without a user, normalised as the schema does', async () => {
    await write();
    const r = await eraseCommand(['--email', 'Jane.Doe+shop@EXAMPLE.com', '--ip', '2001:DB8::0:1'], env());
    assert.equal(r.records, 0, 'no user given: no record removed');
    assert.equal(r.rewritten, 3, 'both of alice records and carol');
    const after = await byTx();
    assert.equal(after.get('tx-a1')?.event['email'], undefined);
    assert.equal(after.get('tx-a1')?.event['ipAddress'], undefined);
    assert.equal(after.get('tx-a1')?.event['userId'], hash.of('alice'));
    assert.equal(after.get('tx-carol')?.event['ipAddress'], undefined);
    assert.equal(after.get('tx-bob')?.event['email'], hash.of('bob@example.org'));
    const card = await eraseCommand(['--card', 'fp_dave'], env());
    assert.equal(card.rewritten, 1);
    assert.equal((await byTx()).get('tx-dave')?.event['card'], undefined, 'card object gone with its last field');
  });

  it('learning:erase --user removes the user and follows the linked fields; bad arguments are refused', async () => {
    await write();
    const r = await eraseCommand(['--user', 'alice'], env());
    assert.deepEqual({ records: r.records, rewritten: r.rewritten }, { records: 2, rewritten: 2 });
    await assert.rejects(eraseCommand([], env()), /--user/);
    await assert.rejects(eraseCommand(['--email', 'not-an-email'], env()), /--email/);
    await assert.rejects(eraseCommand(['--ip', '999.1.1.1'], env()), /--ip/);
    await assert.rejects(eraseUser(store, 'alice'), /keyed hash/);
  });
});
