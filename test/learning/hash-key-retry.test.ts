/**
 * The decision log when Key Vault cannot give the hash key at start: decisions are dropped and counted, the key
 * is read again in the background (backing off 1 s → 60 s, timers driven by hand) through the real
 * `SecretClient` against a local vault, and once it answers decisions are recorded again, with no restart.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import type { TokenCredential } from '@azure/core-auth';
import { SecretClient } from '@azure/keyvault-secrets';
import { loadConfig } from '../../lib/config/config';
import { FEATURE_COUNT, featurize } from '../../lib/features/featurizer';
import { createLearning } from '../../lib/learning/create-learning';
import type { DropReason } from '../../lib/learning/decision-log';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { manifestSchema } from '../../lib/models/manifest';
import type { ScoreResult } from '../../lib/scoring/scorer';
import { generatePayments } from '../../lib/training/synthetic-payments';
import { eventually, recordingLogger } from '../context/support';
import { FakeClock, FakeTimers } from '../support/clock';
import { KEY_VAULT_TOKEN, startKeyVaultPeer } from '../support/key-vault-peer';

const MANIFEST = manifestSchema.parse(
  JSON.parse(readFileSync(path.resolve(__dirname, '../../../models/fraud/1.0.0.json'), 'utf8')),
);
const KEY = 'a-decision-log-hash-key-from-the-vault';
const credential: TokenCredential = {
  getToken: () => Promise.resolve({ token: KEY_VAULT_TOKEN, expiresOnTimestamp: Date.now() + 3_600_000 }),
};

describe('decision log hash key read late from Key Vault', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('drops and counts decisions until the vault gives the key, then records them, without a restart', async () => {
    let reads = 0;
    // the first two reads give an empty secret (refused: shorter than 16 characters), then the key
    const vault = await startKeyVaultPeer(() => (++reads <= 2 ? '' : KEY));
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hash-key-retry-'));
    dirs.push(dir);
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const logger = recordingLogger();
    const drops: DropReason[] = [];
    let written = 0;
    const config = loadConfig({
      KEY_VAULT_URL: vault.url,
      DECISION_LOG_HASH_KEY_SECRET_NAME: 'decision-log-hash-key',
      DECISION_LOG_DIR: dir,
    });
    const learning = await createLearning(config, {
      logger,
      store: new FolderLearningStore(dir),
      secretReader: new SecretClient(vault.url, credential, vault.secretClientOptions),
      timers,
      on: { dropped: (e) => drops.push(e.reason), written: (e) => (written += e.count) },
    });
    const decided = learning.scorerEvents().decided;
    assert.ok(decided !== undefined);
    const payments = generatePayments({ seed: 3, count: 3 });
    const decide = (i: number): void => {
      const s = payments[i];
      assert.ok(s !== undefined);
      const row = featurize(s.event, s.context, new Float32Array(FEATURE_COUNT));
      const result = {
        transactionId: s.event.transactionId,
        score: 0.01,
        decision: 'approve',
        source: 'model',
        model: { name: 'fraud', version: '1.0.0' },
      } as unknown as ScoreResult;
      decided({ event: s.event, row, velocity: s.context.velocity, manifest: MANIFEST, result });
    };

    try {
      assert.equal(reads, 1);
      assert.equal(learning.recording, false);
      decide(0);
      assert.deepEqual(drops, ['no_hash_key'], 'a decision without the key is dropped and counted');
      assert.deepEqual(timers.delays, [1000], 'the first read again is due in 1 s');

      clock.advance(1000);
      timers.runDue();
      await eventually(() => timers.delays.length === 1 && timers.delays[0] === 2000, 5000, 'the second retry');
      assert.equal(reads, 2);
      assert.equal(learning.recording, false);

      clock.advance(2000);
      timers.runDue();
      await eventually(() => learning.recording, 5000, 'the key read on the third try');
      assert.equal(reads, 3);
      assert.equal(timers.delays.filter((d) => d >= 1000).length, 0, 'no read is scheduled once the key is in');

      decide(1);
      assert.deepEqual(drops, ['no_hash_key'], 'no drop once the key is in');
      await learning.dispose();
      assert.equal(written, 1, 'the decision after the key was written');
      const files = readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => f.endsWith('.jsonl'));
      const text = files.map((f) => readFileSync(path.join(dir, f), 'utf8')).join('');
      assert.match(text, /"hashed":\[/, 'the record holds hashed ids');
      const log = logger.lines.join('\n');
      assert.equal(log.match(/could not be read from Key Vault/g)?.length, 1, 'one error line, not one per retry');
      assert.match(log, /decisions are recorded again/);
      assert.ok(!log.includes(KEY), 'the key never reaches the log');
    } finally {
      await learning.dispose();
      await vault.close();
    }
  });

  it('stops reading the key when disposed', async () => {
    const vault = await startKeyVaultPeer(() => '');
    const clock = new FakeClock();
    const timers = new FakeTimers(clock);
    const config = loadConfig({ KEY_VAULT_URL: vault.url, DECISION_LOG_HASH_KEY_SECRET_NAME: 'k' });
    try {
      const learning = await createLearning(config, {
        logger: recordingLogger(),
        store: new FolderLearningStore(mkdtempSync(path.join(os.tmpdir(), 'hash-key-retry-'))),
        secretReader: new SecretClient(vault.url, credential, vault.secretClientOptions),
        timers,
      });
      assert.deepEqual(timers.delays, [1000]);
      await learning.dispose();
      assert.deepEqual(timers.delays, [], 'the pending read is cancelled');
    } finally {
      await vault.close();
    }
  });
});
