/** Ruleset pointer transitions: a promote of the version already serving is refused, an upload of it is a no-op. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { activate, promoteTo, type RulesetState } from '../../lib/decisioning/ruleset-traffic';

const fresh: RulesetState = { generation: 0, active: undefined, previous: [], traffic: undefined };

describe('ruleset promote', () => {
  it('refuses to promote the version already serving (shipped, nothing published yet): 409, nothing changes', () => {
    assert.throws(
      () => promoteTo(fresh, '1.0.0', '1.0.0'),
      (e) => e instanceof AppError && e.code === 'conflict' && e.errors[0]?.path === 'version',
    );
  });

  it('refuses to promote the published active version', () => {
    const s: RulesetState = { ...fresh, active: '1.1.0', previous: ['1.0.0'] };
    assert.throws(
      () => promoteTo(s, '1.1.0', '1.1.0'),
      (e) => e instanceof AppError && e.code === 'conflict',
    );
  });

  it('promotes another version with the serving one as previous, and an upload of the serving one is a no-op', () => {
    const next = promoteTo(fresh, '1.1.0', '1.0.0');
    assert.deepEqual([next?.active, next?.previous], ['1.1.0', ['1.0.0']]);
    assert.equal(activate(fresh, '1.0.0', '1.0.0'), undefined, 'never its own previous version');
  });
});
