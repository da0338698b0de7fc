/**
 * The subsystem registry (lib/platform/registry.ts): construction in a topological order of the declared needs,
 * problems of the declarations named at start before anything is built, disposal in reverse order, every subsystem
 * disposed even if one throws (one AggregateError), and a second disposal harmless. A property: for any acyclic
 * declaration, every subsystem is created after its needs and disposed before them.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  given,
  startSubsystems,
  SubsystemError,
  subsystemOrder,
  subsystemsOf,
  type AnySubsystem,
} from '../../lib/platform/registry';

interface Parts {
  config: { readonly size: number };
  store: { readonly size: number; closed: boolean };
  cache: { readonly store: Parts['store'] };
  api: string;
}
const define = subsystemsOf<Parts>();

/** A subsystem of a loose map that records its creation and disposal in `log`. */
function recorded(
  log: string[],
  name: string,
  needs: string[],
  opts: { failCreate?: boolean; failDispose?: boolean } = {},
): AnySubsystem<Record<string, unknown>> {
  return {
    name,
    needs,
    create: () => {
      if (opts.failCreate === true) throw new Error(`${name} cannot start`);
      log.push(`create ${name}`);
      return name;
    },
    dispose: () => {
      log.push(`dispose ${name}`);
      if (opts.failDispose === true) throw new Error(`${name} cannot stop`);
    },
  };
}

describe('subsystem registry', () => {
  it('creates each subsystem from what its needs provide, in dependency order whatever the list order', async () => {
    const list = [
      define({
        name: 'api',
        needs: ['cache', 'config'],
        create: ({ cache, config }) => `${cache.store.size}/${config.size}`,
      }),
      define({
        name: 'store',
        needs: ['config'],
        create: ({ config }) => ({ size: config.size, closed: false }),
        dispose: (s) => {
          s.closed = true;
        },
      }),
      define({ name: 'cache', needs: ['store'], create: ({ store }) => ({ store }) }),
      given<Parts, 'config'>('config', { size: 3 }),
    ];
    const started = await startSubsystems(list);
    assert.deepEqual(started.order, ['config', 'store', 'cache', 'api']);
    assert.equal(started.get('api'), '3/3');
    const store = started.get('store');
    await started.dispose();
    assert.equal(store.closed, true);
  });

  it('refuses at start, naming both, a need that no subsystem provides; nothing is created', async () => {
    const log: string[] = [];
    await assert.rejects(
      startSubsystems([recorded(log, 'a', []), recorded(log, 'drafts', ['a', 'cases'])]),
      (e: Error) => e.message === 'subsystem "drafts" needs "cases", which no subsystem provides',
    );
    assert.deepEqual(log, []);
  });

  it('refuses a cycle naming its subsystems in order, and a name declared twice', () => {
    const log: string[] = [];
    assert.throws(
      () =>
        subsystemOrder([
          recorded(log, 'x', []),
          recorded(log, 'a', ['b']),
          recorded(log, 'b', ['c', 'x']),
          recorded(log, 'c', ['a']),
        ]),
      { message: 'subsystems form a cycle: a → b → c → a' },
    );
    assert.throws(() => subsystemOrder([recorded(log, 'a', ['a'])]), { message: 'subsystems form a cycle: a → a' });
    assert.throws(() => subsystemOrder([recorded(log, 'a', []), recorded(log, 'a', [])]), {
      message: 'subsystem "a" is declared twice',
    });
  });

  it('disposes in reverse order, every one even when some throw, with one AggregateError naming them; twice is harmless', async () => {
    const log: string[] = [];
    const started = await startSubsystems([
      recorded(log, 'a', []),
      recorded(log, 'b', ['a'], { failDispose: true }),
      recorded(log, 'c', ['b']),
      recorded(log, 'd', ['c'], { failDispose: true }),
    ]);
    const first = started.dispose();
    const second = started.dispose();
    const failure = await first.then(
      () => assert.fail('disposal should fail'),
      (e: unknown) => e,
    );
    assert.ok(failure instanceof AggregateError);
    assert.deepEqual(
      failure.errors.map((e: SubsystemError) => [e.subsystem, e.phase, (e.cause as Error).message]),
      [
        ['d', 'dispose', 'd cannot stop'],
        ['b', 'dispose', 'b cannot stop'],
      ],
    );
    await assert.rejects(second, (e) => e === failure);
    await assert.rejects(started.dispose(), (e) => e === failure);
    assert.deepEqual(log, [
      'create a',
      'create b',
      'create c',
      'create d',
      'dispose d',
      'dispose c',
      'dispose b',
      'dispose a',
    ]);
  });

  it('a failed creation disposes what was created (reverse order) and throws naming the subsystem', async () => {
    const log: string[] = [];
    await assert.rejects(
      startSubsystems([
        recorded(log, 'a', []),
        recorded(log, 'b', ['a']),
        recorded(log, 'c', ['b'], { failCreate: true }),
      ]),
      (e: unknown) => e instanceof SubsystemError && e.subsystem === 'c' && e.phase === 'create',
    );
    assert.deepEqual(log, ['create a', 'create b', 'dispose b', 'dispose a']);
  });

  it('a failed creation whose clean-up fails too throws both', async () => {
    const log: string[] = [];
    await assert.rejects(
      startSubsystems([recorded(log, 'a', [], { failDispose: true }), recorded(log, 'b', ['a'], { failCreate: true })]),
      (e: unknown) =>
        e instanceof AggregateError &&
        e.errors.map((x: SubsystemError) => `${x.subsystem} ${x.phase}`).join(',') === 'b create,a dispose',
    );
  });

  it('property: any acyclic declaration creates each after its needs and disposes each before them', async () => {
    // subsystem i may need any j < i; the list is then shuffled
    const dag = fc
      .integer({ min: 1, max: 12 })
      .chain((n) =>
        fc.tuple(
          fc.tuple(...Array.from({ length: n }, (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => j)))),
          fc.array(fc.nat(), { minLength: n, maxLength: n }),
        ),
      );
    await fc.assert(
      fc.asyncProperty(dag, async ([needs, keys]) => {
        const log: string[] = [];
        const list = needs.map((ns, i) =>
          recorded(
            log,
            `s${i}`,
            ns.map((j) => `s${j}`),
          ),
        );
        const shuffled = list
          .map((s, i) => ({ s, k: keys[i] as number }))
          .sort((x, y) => x.k - y.k)
          .map((x) => x.s);
        const started = await startSubsystems(shuffled);
        await started.dispose();
        const at = (what: string): number => log.indexOf(what);
        needs.forEach((ns, i) => {
          for (const j of ns) {
            assert.ok(at(`create s${j}`) < at(`create s${i}`), `s${j} created before s${i}`);
            assert.ok(at(`dispose s${i}`) < at(`dispose s${j}`), `s${i} disposed before s${j}`);
          }
        });
        assert.equal(log.length, 2 * needs.length);
      }),
    );
  });
});
