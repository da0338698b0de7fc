/**
 * What the benchmark's servers share about their inputs: the naive apps' user profiles in Redis (half of the
 * {@link USERS} have one, read by `bench:naive:profile:<userId>`), and the bundled model file the runs score with.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { Redis } from 'ioredis';
import { USERS } from '../test/support/load/payment-body';

/** The profile the naive apps read for a user that has one. */
export const NAIVE_PROFILE = JSON.stringify({
  homeCountry: 'FR',
  usualAmount: 80,
  knownDevices: ['dev-abc'],
  accountCreatedAt: '2024-01-01T00:00:00Z',
});

/** Writes the naive apps' profiles: half the users have one (one pipelined round trip). */
export async function seedNaiveProfiles(redis: Redis): Promise<void> {
  const setup = redis.pipeline();
  for (let u = 0; u < USERS; u += 2) setup.set(`bench:naive:profile:user-${u}`, NAIVE_PROFILE);
  await setup.exec();
}

/** The newest bundled model file, `{modelsDir}/fraud/{version}.onnx`. @throws when there is none. */
export async function bundledModelFile(modelsDir: string): Promise<string> {
  const latest = (await fs.readdir(path.join(modelsDir, 'fraud')))
    .filter((f) => /^\d+\.\d+\.\d+\.onnx$/.test(f))
    .sort()
    .at(-1);
  if (latest === undefined) throw new Error('No bundled model under models/fraud/ (run `npm run model:train`).');
  return path.join(modelsDir, 'fraud', latest);
}
