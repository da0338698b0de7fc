/** One contract suite for context sources (origins): Redis profiles, in-process, HTTP profile service. */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Redis } from 'ioredis';
import {
  HttpProfileSource,
  MemoryProfileSource,
  RedisProfileSource,
  type ContextSource,
} from '../../lib/context/context-source';
import { ContextKeys } from '../../lib/context/keys';
import { syntheticProfile } from '../../lib/context/synthetic-profiles';
import { cleanup, testClient, testPrefix } from './support';

let client: Redis;
let server: http.Server;
let baseUrl: string;
const prefixes: string[] = [];
/** What the HTTP profile service serves: a profile's JSON text, by user id. */
const served = new Map<string, string>();

before(async () => {
  client = await testClient();
  server = http.createServer((req, res) => {
    const id = decodeURIComponent((req.url ?? '').replace(/^\/profiles\//, ''));
    if (id === 'slow') return; // never answers
    if (id === 'broken') return void res.writeHead(500).end();
    const text = served.get(id);
    if (text === undefined) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/profiles`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  for (const p of prefixes) await cleanup(client, p);
  client.disconnect();
});

interface Fixture {
  readonly source: ContextSource;
  /** Stores a record as raw text (a valid profile's JSON, or junk). */
  store(userId: string, text: string): Promise<void>;
}

const FIXTURES: Record<string, () => Fixture> = {
  'Redis profile:{userId}': () => {
    const prefix = testPrefix('src');
    prefixes.push(prefix);
    const keys = new ContextKeys(prefix);
    return {
      source: new RedisProfileSource(client, keys),
      store: async (u, t) => void (await client.set(keys.profile(u), t)),
    };
  },
  'HTTP profile service': () => ({
    source: new HttpProfileSource({ baseUrl, timeoutMs: 2000 }),
    store: async (u, t) => void served.set(u, t),
  }),
  'in-process': () => {
    const source = new MemoryProfileSource();
    return {
      source,
      store: async (u, t) => {
        let doc: unknown;
        try {
          doc = JSON.parse(t);
        } catch {
          doc = undefined;
        }
        // the in-process source holds typed profiles only; junk cannot be stored in it
        if (doc !== undefined && typeof doc === 'object' && doc !== null && 'homeCountry' in doc)
          await source.put(u, doc as never);
      },
    };
  },
};

for (const [name, make] of Object.entries(FIXTURES)) {
  describe(`context source contract: ${name}`, () => {
    it('loads a stored profile', async () => {
      const f = make();
      await f.store('u-1', JSON.stringify(syntheticProfile(1)));
      assert.deepEqual(await f.source.load('u-1'), syntheticProfile(1));
    });
    it('answers null for a user without a profile', async () => {
      assert.equal(await make().source.load(`nobody-${Math.random()}`), null);
    });
    it('handles ids that need escaping', async () => {
      const f = make();
      await f.store('a/b c:d', JSON.stringify(syntheticProfile(2)));
      assert.deepEqual(await f.source.load('a/b c:d'), syntheticProfile(2));
    });
    if (name !== 'in-process') {
      it('rejects an invalid record instead of returning it', async () => {
        const f = make();
        await f.store('bad-json', '{not json');
        await f.store('bad-shape', JSON.stringify({ homeCountry: 'FR' }));
        await assert.rejects(f.source.load('bad-json'));
        await assert.rejects(f.source.load('bad-shape'));
      });
    }
  });
}

describe('HTTP profile source', () => {
  it('rejects on a server error and on a timeout', async () => {
    // a generous budget for the answer that does come (a loaded machine must not turn the 500 into a
    // timeout), a short one for the server that never answers (it times out whatever the machine does)
    await assert.rejects(new HttpProfileSource({ baseUrl, timeoutMs: 5000 }).load('broken'), /500/);
    const s = new HttpProfileSource({ baseUrl, timeoutMs: 50 });
    await assert.rejects(s.load('slow'), (e: Error) => e.name === 'TimeoutError');
  });
});
