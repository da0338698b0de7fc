/**
 * The admin API's request bodies, the same for every artifact kind (`promote { version }`,
 * `traffic { candidate, canaryPercent?, shadowPercent? }`): checked strictly, every invalid field named
 * (`validation_failed`, problem+json). Each kind supplies only what its versions look like.
 * @module
 */
import { z } from 'zod';
import { textString } from '../domain/text';
import { parseBody } from '../errors/parse-body';

import type { TrafficSplit } from './rollout-rules';

export type { TrafficSplit } from './rollout-rules';

const percent = z
  .number({ error: 'must be a number from 0 to 100' })
  .min(0, { error: 'must be at least 0' })
  .max(100, { error: 'must be at most 100' });

/** The body parsers of one kind's admin API. */
export class AdminBodies {
  private readonly promoteBody;
  private readonly trafficBody;

  /**
   * @param pattern what a version of the kind looks like.
   * @param example a version to show in messages, e.g. `1.2.0`.
   */
  constructor(pattern: RegExp, example: string) {
    const version = textString('identifier', `must be a version string like ${example}`)
      .max(64, { error: 'must be at most 64 characters' })
      .regex(pattern, { error: `must be a version like ${example}` });
    this.promoteBody = z.strictObject({ version }, { error: `must be an object like { "version": "${example}" }` });
    this.trafficBody = z.strictObject(
      { candidate: version, canaryPercent: percent.default(0), shadowPercent: percent.default(0) },
      { error: `must be an object like { "candidate": "${example}", "canaryPercent": 10, "shadowPercent": 0 }` },
    );
  }

  /** `{ "version" }` of a promote. @throws AppError `validation_failed` naming every invalid field. */
  version(body: unknown): string {
    return parseBody(this.promoteBody, body).version;
  }

  /** `{ candidate, canaryPercent?, shadowPercent? }`. @throws AppError `validation_failed` naming every invalid field. */
  traffic(body: unknown): TrafficSplit {
    return parseBody(this.trafficBody, body);
  }
}
