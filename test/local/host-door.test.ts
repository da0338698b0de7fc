/**
 * The local host's door (`local/host-door.ts`): pure behaviour on an injected clock, then through the
 * local host over HTTP with a fixture app: past the limit a POST is answered 503 `overloaded` +
 * `Retry-After` without invoking the function (its body unread, the keep-alive connection still usable
 * once its hold has passed), GET always passes, and a function's own 503 counts as a drop.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HostDoor } from '../../local/host-door';
import { LocalHost } from '../../local/host';

describe('HostDoor (injected clock)', () => {
  it('lets GET/HEAD/OPTIONS pass unguarded and refuses work past the limit with the precomputed 503', () => {
    const door = new HostDoor({ maxLimit: 2, minLimit: 2, now: () => 0 });
    assert.equal(door.enter('GET'), 'unguarded');
    assert.equal(door.enter('HEAD'), 'unguarded');
    const a = door.enter('POST');
    const b = door.enter('DELETE');
    assert.equal(typeof a, 'object');
    assert.equal(typeof b, 'object');
    assert.equal(door.enter('POST'), undefined, 'a third request inside a limit of 2 is refused');
    assert.equal(door.stats.refused, 1);
    assert.equal(door.refusal.status, 503);
    assert.equal(door.refusal.headers['retry-after'], '1');
    const problem = JSON.parse(door.refusal.body.toString('utf8')) as Record<string, unknown>;
    assert.equal(problem['code'], 'overloaded');
    assert.equal(problem['status'], 503);
    if (typeof a === 'object') a.leave(200);
    assert.equal(typeof door.enter('POST'), 'object', 'a slot freed by an answer admits the next request');
  });

  it('holds a refused connection for holdMs (default 500), never longer than Retry-After', () => {
    assert.equal(new HostDoor().holdMs, 500);
    assert.equal(new HostDoor({ holdMs: 5000 }).holdMs, 1000, 'capped at the 1 s Retry-After');
    assert.equal(new HostDoor({ holdMs: 1500, retryAfterSec: 2 }).holdMs, 1500);
    assert.equal(new HostDoor({ holdMs: 0 }).holdMs, 0, '0 = the next request is read at once');
  });

  it('with a latency target, a request that stayed too long in the host is a drop; a drained host starts over', () => {
    let now = 0;
    const changes: { from: number; to: number }[] = [];
    const door = new HostDoor({
      maxLimit: 10,
      minLimit: 2,
      latencyTargetMs: 100,
      now: () => now,
      on: { limitChanged: (e) => changes.push(e) },
    });
    const passes = Array.from({ length: 10 }, () => door.enter('POST'));
    now = 50;
    const fast = passes[0];
    if (typeof fast === 'object') fast.leave(200); // 50 ms inside: not a drop
    assert.equal(door.stats.dropped, 0);
    now = 150;
    for (const p of passes.slice(1, 5)) if (typeof p === 'object') p.leave(200); // 150 ms inside: slow
    assert.equal(door.stats.dropped, 4, 'answers past the target count as drops, whatever their status');
    const lowered = door.stats.limit;
    assert.ok(lowered < 5, `limit after slow answers with 5 inside: ${lowered}`);
    assert.equal(door.enter('POST'), undefined, 'five still inside, above the lowered limit: refused');
    for (const p of passes.slice(5, 9)) if (typeof p === 'object') p.leave(200);
    assert.equal(door.stats.limit, lowered, 'not drained yet (one inside): the limit stays');
    const last = passes[9];
    if (typeof last === 'object') last.leave(200);
    assert.equal(door.stats.inflight, 0);
    assert.equal(door.stats.limit, 10, 'drained: the limit starts over at its maximum');
    assert.deepEqual(changes.at(-1), { from: lowered, to: 10, drops: 0 });
  });

  it('without a latency target, a slow answer is not a drop and a drained host keeps its limit', () => {
    let now = 0;
    const door = new HostDoor({ maxLimit: 10, minLimit: 2, now: () => now });
    const passes = Array.from({ length: 4 }, () => door.enter('POST'));
    for (const p of passes.slice(0, 3)) if (typeof p === 'object') p.leave(503);
    const lowered = door.stats.limit;
    assert.ok(lowered < 10);
    now = 10_000;
    const last = passes[3];
    if (typeof last === 'object') last.leave(200); // 10 s inside, the last one out
    assert.equal(door.stats.dropped, 3, 'only the 503s');
    assert.equal(door.stats.limit, lowered);
  });

  it("lowers the limit when the function's answers are 503s (drops), never below the floor", () => {
    const changes: { from: number; to: number }[] = [];
    const door = new HostDoor({
      maxLimit: 10,
      minLimit: 4,
      now: () => 0,
      on: { limitChanged: (e) => changes.push(e) },
    });
    const passes = Array.from({ length: 10 }, () => door.enter('POST'));
    for (const p of passes.slice(0, 3)) if (typeof p === 'object') p.leave(503);
    assert.equal(door.stats.dropped, 3);
    assert.ok(door.stats.limit < 10, `limit after 3 drops: ${door.stats.limit}`);
    assert.ok(door.stats.limit >= 4);
    assert.equal(changes.length, 1);
    const repeat = passes[0];
    if (typeof repeat === 'object') repeat.leave(503); // a second leave of the same pass counts nothing
    assert.equal(door.stats.dropped, 3);
  });
});

describe('the door in the local host (HTTP)', () => {
  let host: LocalHost;
  let fixture: typeof import('./fixtures/door-app');
  let agent: http.Agent;
  /** The holds the door scheduled (`holdMs` each), fired by the test instead of a timer. */
  const holds: { fn: () => void; ms: number }[] = [];

  before(async () => {
    host = await LocalHost.create({
      port: 0,
      appModules: [path.join(__dirname, 'fixtures', 'door-app.js')],
      log: () => undefined,
      door: new HostDoor({ maxLimit: 2, minLimit: 2, holdMs: 250, holdScheduler: (fn, ms) => holds.push({ fn, ms }) }),
    });
    fixture = await import('./fixtures/door-app');
    agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  });
  after(async () => {
    agent.destroy();
    await host.dispose();
  });

  function request(
    method: string,
    route: string,
    body = '',
    via?: http.Agent,
  ): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(`${host.url}/api/${route}`, { method, agent: via ?? false, timeout: 30_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${route}: no answer within 30 s`)));
      req.on('error', reject);
      req.end(body);
    });
  }

  it('refuses past the limit without invoking the function; GET passes; the connection stays usable', async () => {
    const held = [request('POST', 'work', 'a'), request('POST', 'work', 'b')];
    await fixture.whenHeld(2);
    const big = 'x'.repeat(256 * 1024);
    const refused = await request('POST', 'work', big, agent);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(String(refused.headers['content-type']), /application\/problem\+json/);
    assert.equal((JSON.parse(refused.text) as { code: string }).code, 'overloaded');
    assert.equal(fixture.state.workInvocations, 2, 'the refused request never reached the function');
    assert.equal(host.doorStats?.refused, 1);
    assert.deepEqual(
      holds.map((h) => h.ms),
      [250],
      'the refused connection is held for holdMs',
    );

    // the next request on the refused keep-alive socket waits for the hold; another connection does not
    const probes = fixture.state.probeInvocations;
    let heldProbeAnswered = false;
    const heldProbe = request('GET', 'probe', '', agent).then((r) => ((heldProbeAnswered = true), r));
    const other = await request('GET', 'probe', '');
    assert.equal(other.status, 200);
    assert.equal(fixture.state.probeInvocations, probes + 1, 'only the probe on the other connection was read');
    assert.equal(heldProbeAnswered, false, 'the held connection was not read before its hold ended');
    holds.shift()?.fn();
    const probe = await heldProbe;
    assert.equal(probe.status, 200, 'GET is not guarded, and the unread body did not break the connection');
    assert.equal(fixture.state.probeInvocations, probes + 2);

    fixture.releaseAll();
    const answers = await Promise.all(held);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200],
    );
    const next = request('POST', 'work', 'c');
    await fixture.whenHeld(1);
    fixture.releaseAll();
    assert.equal((await next).status, 200, 'room again: admitted');
  });

  it("counts the function's own 503 as a drop", async () => {
    const before = host.doorStats?.dropped ?? -1;
    const shed = await request('POST', 'work', 'shed');
    assert.equal(shed.status, 503);
    assert.equal(host.doorStats?.dropped, before + 1);
  });
});
