import type { Redis } from 'ioredis';
import type { ContextKeys } from './keys';
import { runScript } from '../platform/redis/script';
import {
  DEFAULT_MAX_EVENTS_PER_USER,
  roundSum,
  WINDOW_MS,
  type PaymentRecord,
  type VelocityFigures,
  type VelocityStore,
} from './velocity';

/**
 * KEYS: 1 zset (member transactionId, score `at`), 2 hash transactionId → record, 3 hash of running
 * aggregates (per window w: count `c<w>`, sum `s<w>`, boundary `b<w>`), 4 hash country → payments in 24 h.
 * ARGV: at, transactionId, amount, country, max events, key TTL ms.
 *
 * Aggregates are maintained incrementally: window w holds the stored payments with `t > b<w>`. Each call
 * moves every boundary to `at − W` (forwards: subtract payments leaving; backwards, for a clock behind
 * another instance's: add back payments still stored), so a call costs O(log n + payments crossing a
 * boundary), not O(payments in 24 h). Payments at or before the 24 h boundary are deleted. Aggregates
 * missing while payments exist (never expected: all keys share one TTL) are rebuilt from the zset.
 * Record = "amount|country|count1m|count1h|count24h|sum1m|sum1h|sum24h|distinctCountries24h" with the
 * figures before this payment; the script returns it. Sums travel as strings (a Lua number would be
 * truncated to an integer in a Redis reply).
 */
const RECORD_LUA = `
local Z, R, A, C = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local now, tx = tonumber(ARGV[1]), ARGV[2]
local prev = redis.call('HGET', R, tx)
if prev then return prev end
local W = { ${WINDOW_MS.m1}, ${WINDOW_MS.h1}, ${WINDOW_MS.d1} }
local agg = redis.call('HMGET', A, 'c1', 's1', 'b1', 'c2', 's2', 'b2', 'c3', 's3', 'b3')
local cnt, sum, cur = {}, {}, {}
for w = 1, 3 do
  cnt[w] = tonumber(agg[3 * w - 2]) or 0
  sum[w] = tonumber(agg[3 * w - 1]) or 0
  cur[w] = tonumber(agg[3 * w])
end
local function country(c, d)
  if redis.call('HINCRBY', C, c, d) <= 0 then redis.call('HDEL', C, c) end
end
local function apply(w, ids, sign)
  for i = 1, #ids, 500 do
    local part = { unpack(ids, i, math.min(i + 499, #ids)) }
    local recs = redis.call('HMGET', R, unpack(part))
    for k = 1, #part do
      local rec = recs[k]
      if rec then
        local a, c = string.match(rec, '^([^|]*)|([^|]*)|')
        cnt[w] = cnt[w] + sign
        sum[w] = sum[w] + sign * (tonumber(a) or 0)
        if w == 3 and c then country(c, sign) end
      end
    end
  end
end
for w = 1, 3 do
  local b = now - W[w]
  if cur[w] == nil then
    cnt[w], sum[w] = 0, 0
    if w == 3 then redis.call('DEL', C) end
    apply(w, redis.call('ZRANGEBYSCORE', Z, '(' .. b, '+inf'), 1)
  elseif b > cur[w] then
    apply(w, redis.call('ZRANGEBYSCORE', Z, '(' .. cur[w], b), -1)
  elseif b < cur[w] then
    apply(w, redis.call('ZRANGEBYSCORE', Z, '(' .. b, cur[w]), 1)
  end
  cur[w] = b
  if cnt[w] <= 0 then cnt[w], sum[w] = 0, 0 end
end
local old = redis.call('ZRANGEBYSCORE', Z, '-inf', cur[3])
if #old > 0 then
  for i = 1, #old, 500 do redis.call('HDEL', R, unpack(old, i, math.min(i + 499, #old))) end
  redis.call('ZREMRANGEBYSCORE', Z, '-inf', cur[3])
end
local f = function(x) return string.format('%.17g', x) end
local out = table.concat({ ARGV[3], ARGV[4], cnt[1], cnt[2], cnt[3], f(sum[1]), f(sum[2]), f(sum[3]), redis.call('HLEN', C) }, '|')
local amount = tonumber(ARGV[3])
redis.call('ZADD', Z, now, tx)
redis.call('HSET', R, tx, out)
for w = 1, 3 do cnt[w] = cnt[w] + 1; sum[w] = sum[w] + amount end
country(ARGV[4], 1)
local n = redis.call('ZCARD', Z)
if n > tonumber(ARGV[5]) then
  local popped = redis.call('ZPOPMIN', Z, n - tonumber(ARGV[5]))
  for i = 1, #popped, 2 do
    local t = tonumber(popped[i + 1])
    for w = 1, 3 do
      if t > cur[w] then apply(w, { popped[i] }, -1) end
    end
    redis.call('HDEL', R, popped[i])
  end
end
redis.call('HSET', A, 'c1', cnt[1], 's1', f(sum[1]), 'b1', f(cur[1]), 'c2', cnt[2], 's2', f(sum[2]), 'b2', f(cur[2]), 'c3', cnt[3], 's3', f(sum[3]), 'b3', f(cur[3]))
for _, k in ipairs(KEYS) do redis.call('PEXPIRE', k, tonumber(ARGV[6])) end
return out`;

/** Parses a record returned by the script. @throws Error when it is not one. */
export function parseVelocityRecord(rec: unknown): VelocityFigures {
  const parts = typeof rec === 'string' ? rec.split('|') : [];
  const n = parts.slice(2).map(Number);
  if (n.length !== 7 || n.some((x) => !Number.isFinite(x))) throw new Error('unexpected velocity record');
  const [count1m, count1h, count24h, sum1m, sum1h, sum24h, distinctCountries24h] = n as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    count1m,
    count1h,
    count24h,
    sum1m: roundSum(sum1m),
    sum1h: roundSum(sum1h),
    sum24h: roundSum(sum24h),
    distinctCountries24h,
  };
}

/** Options of a {@link RedisVelocityStore}. */
export interface RedisVelocityOptions {
  readonly keys: ContextKeys;
  /** Default {@link DEFAULT_MAX_EVENTS_PER_USER}. */
  readonly maxEventsPerUser?: number;
}

/**
 * Velocity in Redis: one Lua script reads and updates a user's payments atomically, in one round trip
 * (EVALSHA; pipelined with the context GET by the caller), in O(log n) amortized per payment. Keys expire
 * 24 h + 1 min after the user's last payment.
 */
export class RedisVelocityStore implements VelocityStore {
  constructor(
    private readonly client: Redis,
    private readonly options: RedisVelocityOptions,
  ) {}

  async record(p: PaymentRecord): Promise<VelocityFigures> {
    const max = this.options.maxEventsPerUser ?? DEFAULT_MAX_EVENTS_PER_USER;
    const rec = await runScript(this.client, RECORD_LUA, this.options.keys.velocity(p.userId), [
      p.at,
      p.transactionId,
      String(p.amount),
      p.country,
      max,
      WINDOW_MS.d1 + 60_000,
    ]);
    return parseVelocityRecord(rec);
  }
}
