/**
 * Who is acting: Easy Auth's principal decoder (property: any string gives an actor or an `unauthenticated`
 * problem naming the header, never another error) and the three identity modes.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AppError, toProblem } from '../../lib/errors/errors';
import { Identity } from '../../lib/identity/identity';
import { decodePrincipal, encodePrincipal } from '../../lib/identity/principal';

function headers(h: Record<string, string>): { get(name: string): string | null } {
  return { get: (n) => h[n.toLowerCase()] ?? null };
}

function unauthenticatedOrActor(value: string): void {
  try {
    const a = decodePrincipal(value);
    assert.equal(typeof a.name, 'string');
    assert.ok(a.name.length > 0);
    for (const r of a.roles) assert.ok(r === 'analyst' || r === 'lead');
  } catch (err) {
    assert.ok(err instanceof AppError, `not an AppError: ${String(err)}`);
    const p = toProblem(err);
    assert.equal(p.status, 401);
    assert.equal(p.code, 'unauthenticated');
    assert.deepEqual(
      p.errors?.map((e) => e.path),
      ['x-ms-client-principal'],
    );
  }
}

describe('Easy Auth principal decoder', () => {
  it('decodes the name and the case roles of a principal in Easy Auth format', () => {
    const doc = {
      auth_typ: 'aad',
      name_typ: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress',
      role_typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role',
      claims: [
        { typ: 'http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress', val: 'ana@example.com' },
        { typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role', val: 'lead' },
        { typ: 'http://schemas.microsoft.com/ws/2008/06/identity/claims/role', val: 'Admin' },
        { typ: 'roles', val: 'analyst' },
      ],
    };
    const a = decodePrincipal(Buffer.from(JSON.stringify(doc)).toString('base64'));
    assert.deepEqual(a, { name: 'ana@example.com', roles: ['analyst', 'lead'], development: false });
    assert.deepEqual(decodePrincipal(encodePrincipal('bob', ['analyst'])), {
      name: 'bob',
      roles: ['analyst'],
      development: false,
    });
  });

  it('refuses a principal without a user name', () => {
    const noName = Buffer.from(JSON.stringify({ auth_typ: 'aad', claims: [{ typ: 'roles', val: 'lead' }] })).toString(
      'base64',
    );
    assert.throws(
      () => decodePrincipal(noName),
      (e) => e instanceof AppError && e.code === 'unauthenticated',
    );
  });

  it('refuses a principal whose user name holds NUL or another control character, naming the header', () => {
    for (const name of ['a\u0000b', 'tab\there', 'lone\ud800']) {
      assert.throws(
        () => decodePrincipal(encodePrincipal(name, ['lead'])),
        (e) => e instanceof AppError && e.code === 'unauthenticated' && e.errors?.[0]?.path === 'x-ms-client-principal',
        JSON.stringify(name),
      );
    }
  });

  it('property: any string gives an actor or an unauthenticated problem, never another error', () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), unauthenticatedOrActor), { numRuns: 500 });
  });

  it('property: base64 of any JSON value gives an actor or an unauthenticated problem', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => unauthenticatedOrActor(Buffer.from(JSON.stringify(v)).toString('base64'))),
      { numRuns: 500 },
    );
  });

  it('property: principals with arbitrary claims decode without throwing anything but unauthenticated', () => {
    const claim = fc.record({
      typ: fc.oneof(fc.constant('name'), fc.constant('roles'), fc.string()),
      val: fc.anything(),
    });
    fc.assert(
      fc.property(
        fc.record({ name_typ: fc.option(fc.string()), role_typ: fc.option(fc.string()), claims: fc.array(claim) }),
        (doc) => unauthenticatedOrActor(Buffer.from(JSON.stringify(doc)).toString('base64')),
      ),
      { numRuns: 300 },
    );
  });
});

describe('identity modes', () => {
  const devActor = { name: 'dev', roles: ['analyst'] as const };
  const principal = encodePrincipal('eve', ['lead']);

  it('disabled: refuses (403) and never reads the header', () => {
    const id = new Identity({ mode: 'disabled', devActor });
    for (const h of [{}, { 'x-ms-client-principal': principal }] as Record<string, string>[])
      assert.throws(
        () => id.actorOf(headers(h)),
        (e) => e instanceof AppError && e.code === 'forbidden',
      );
  });

  it('easyauth: the header is required (401) and gives the actor', () => {
    const id = new Identity({ mode: 'easyauth', devActor });
    assert.throws(
      () => id.actorOf(headers({})),
      (e) => e instanceof AppError && e.code === 'unauthenticated',
    );
    assert.deepEqual(id.actorOf(headers({ 'x-ms-client-principal': principal })), {
      name: 'eve',
      roles: ['lead'],
      development: false,
    });
  });

  it('development: the default actor, or the header; both marked development', () => {
    const id = new Identity({ mode: 'development', devActor });
    assert.deepEqual(id.actorOf(headers({})), { name: 'dev', roles: ['analyst'], development: true });
    assert.deepEqual(id.actorOf(headers({ 'x-ms-client-principal': principal })), {
      name: 'eve',
      roles: ['lead'],
      development: true,
    });
  });

  it('require: a user without a case role is forbidden', () => {
    const id = new Identity({ mode: 'easyauth', devActor });
    const h = headers({ 'x-ms-client-principal': encodePrincipal('mallory', ['Reader']) });
    assert.throws(
      () => id.require(h, ['analyst', 'lead']),
      (e) => e instanceof AppError && e.code === 'forbidden',
    );
    assert.throws(
      () => id.require(headers({ 'x-ms-client-principal': encodePrincipal('al', ['analyst']) }), ['lead']),
      (e) => e instanceof AppError && e.code === 'forbidden',
    );
  });
});
