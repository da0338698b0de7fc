/**
 * The Lua script of the Redis aggregate store (lib/signals/redis-aggregate-store.ts): the rings of
 * lib/signals/aggregate-ring.ts, packed, one hash field per aggregate; and the idempotency records.
 * @module
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { BUCKETS } from './aggregate-store';
import { SLOTS } from './aggregate-ring';

/**
 * KEYS: per entity 2 keys in one hash tag: `A` (a hash: the rings, field = aggregate id; the transactions'
 * answers, field `=<txid>` → packed `(id, value)` pairs; the number of answers, field `=`), `X` (the recorded
 * transactions, a zset txid → at, for evicting the oldest answers).
 * ARGV: txid, at, records kept per entity, member width; then per entity: key TTL ms, n, the answer's struct
 * format (`<` + n × `d`); then per aggregate: id, op (c s a m d), current bucket, cap, addend (`''` when the
 * payment is not counted). Aggregate ids hold no `=` (lib/signals/aggregate-ring.ts checks), so no field collides.
 *
 * A ring is the list of its non-empty slots, little-endian (Lua's `struct`), at most SLOTS entries, in the order
 * their slots were first used: `dd` (bucket, value) for count, sum and max; `ddd` (bucket, count, sum) for avg;
 * `dIc0` (bucket, the slot's hashed members concatenated, each `width` bytes) for distinct. A slot is
 * `bucket mod SLOTS`: a write to an entry of an older bucket resets it, a write older than its entry is dropped.
 * An entity seen once holds one entry per aggregate; a busy one at most SLOTS.
 *
 * Per entity: one HMGET reads the rings, this transaction's answer and the answer count; an aggregate already
 * answered for this transaction keeps its answer and is not counted again; the others get the payment (when
 * counted) and read their window; one HSET writes the changed rings, the answer and the count; ZADD records the
 * transaction, ZPOPMIN + HDEL drop the oldest answers beyond the cap; the TTL of both keys becomes the larger of
 * theirs (PTTL) and this group's (a version with shorter windows never shortens a longer one's). That is 6 commands
 * per entity (8 when an answer is evicted), none when the transaction is answered already. The work is bounded by
 * the aggregates and their caps, never by the payments an entity has seen. Returns per entity its values packed
 * as doubles, in the order given (a Lua number would be truncated to an integer in a Redis reply).
 */
export const AGGREGATE_LUA = `
local tx, at, keep, w = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local S, B = ${SLOTS}, ${BUCKETS}
local function has(m, v)
  local i = 1
  while true do
    local p = string.find(m, v, i, true)
    if not p then return false end
    if (p - 1) % w == 0 then return true end
    i = p + 1
  end
end
local function numeric(op, s, cur, v)
  local F, k = '<dd', 16
  if op == 'a' then F, k = '<ddd', 24 end
  s = s or ''
  local changed = false
  if v then
    local x, slot, e = tonumber(v), cur % S, nil
    local found
    for pos = 1, #s, k do
      if struct.unpack('<d', s, pos) % S == slot then found = pos break end
    end
    local id, a, b = -1, 0, 0
    if found then id, a, b = struct.unpack(F, s, found) end
    if id < cur then
      if op == 'a' then e = struct.pack(F, cur, 1, x)
      elseif op == 'c' then e = struct.pack(F, cur, 1)
      else e = struct.pack(F, cur, x) end
    elseif id == cur then
      if op == 'a' then e = struct.pack(F, cur, a + 1, b + x)
      elseif op == 'c' then e = struct.pack(F, cur, a + 1)
      elseif op == 's' then e = struct.pack(F, cur, a + x)
      elseif x > a then e = struct.pack(F, cur, x) end
    end
    if e then
      if found then s = string.sub(s, 1, found - 1) .. e .. string.sub(s, found + k) else s = s .. e end
      changed = true
    end
  end
  local lo, a, b, mx = cur - B, 0, 0, nil
  for pos = 1, #s, k do
    local id, p, q = struct.unpack(F, s, pos)
    if id >= lo and id <= cur then
      if op == 'm' then
        if mx == nil or p > mx then mx = p end
      else
        a = a + p
        if k == 24 then b = b + q end
      end
    end
  end
  local val = a
  if op == 'm' then val = mx or 0 elseif op == 'a' then if a == 0 then val = 0 else val = b / a end end
  return val, changed and s
end
local function distinct(s, cur, cap, v)
  s = s or ''
  local changed = false
  if v then
    local slot, pos, found, fid, fm, fend = cur % S, 1, nil, -1, '', nil
    while pos <= #s do
      local id, m, nxt = struct.unpack('<dIc0', s, pos)
      if id % S == slot then found, fid, fm, fend = pos, id, m, nxt break end
      pos = nxt
    end
    if fid <= cur then
      if fid < cur then fm = '' end
      local add = #fm < cap * w and not has(fm, v)
      if add then fm = fm .. v end
      if add or fid < cur then
        local e = struct.pack('<dIc0', cur, #fm, fm)
        if found then s = string.sub(s, 1, found - 1) .. e .. string.sub(s, fend) else s = s .. e end
        changed = true
      end
    end
  end
  local lo, pos, sets = cur - B, 1, nil
  while pos <= #s do
    local id, m, nxt = struct.unpack('<dIc0', s, pos)
    pos = nxt
    if id >= lo and id <= cur and #m > 0 then
      if #m >= cap * w then return cap, changed and s end
      sets = sets or {}
      sets[#sets + 1] = m
    end
  end
  if not sets then return 0, changed and s end
  if #sets == 1 then return math.min(#sets[1] / w, cap), changed and s end
  local seen, n = {}, 0
  for _, m in ipairs(sets) do
    for p = 1, #m, w do
      local x = string.sub(m, p, p + w - 1)
      if not seen[x] then seen[x], n = true, n + 1 end
    end
  end
  return math.min(n, cap), changed and s
end
local RT = '=' .. tx
local out, ai = {}, 5
for e = 1, #KEYS / 2 do
  local A, X = KEYS[2 * e - 1], KEYS[2 * e]
  local ttl, n, fmt, first = tonumber(ARGV[ai]), tonumber(ARGV[ai + 1]), ARGV[ai + 2], ai + 3
  ai = first + 5 * n
  local fields = {}
  for k = 0, n - 1 do fields[k + 1] = ARGV[first + 5 * k] end
  fields[n + 1], fields[n + 2] = RT, '='
  local got = redis.call('HMGET', A, unpack(fields))
  local prev, count, known = got[n + 1], tonumber(got[n + 2]) or 0, nil
  if prev then
    known = {}
    local pos = 1
    while pos <= #prev do
      local id, v, nxt = struct.unpack('<Ic0d', prev, pos)
      known[id], pos = v, nxt
    end
  end
  local res, set, rec, todo = {}, {}, {}, 0
  for k = 0, n - 1 do
    local o = first + 5 * k
    local id = ARGV[o]
    local v = known and known[id]
    if v then
      res[k + 1] = v
    else
      local op, cur, cap, addend = ARGV[o + 1], tonumber(ARGV[o + 2]), tonumber(ARGV[o + 3]), ARGV[o + 4]
      if addend == '' then addend = nil end
      local val, ring
      if op == 'd' then val, ring = distinct(got[k + 1], cur, cap, addend) else val, ring = numeric(op, got[k + 1], cur, addend) end
      if ring then
        set[#set + 1] = id
        set[#set + 1] = ring
      end
      res[k + 1] = val
      rec[3 * todo + 1], rec[3 * todo + 2], rec[3 * todo + 3] = #id, id, val
      todo = todo + 1
    end
  end
  if todo > 0 then
    local left = redis.call('PTTL', A)
    if left > ttl then ttl = left end
    local line = struct.pack('<' .. string.rep('Ic0d', todo), unpack(rec))
    if prev then line = prev .. line end
    set[#set + 1] = RT
    set[#set + 1] = line
    local gone = nil
    if redis.call('ZADD', X, 'NX', at, tx) == 1 then
      count = count + 1
      if count > keep then
        local old = redis.call('ZPOPMIN', X, count - keep)
        gone = {}
        for i = 1, #old, 2 do gone[#gone + 1] = '=' .. old[i] end
        count = count - #gone
      end
      set[#set + 1] = '='
      set[#set + 1] = count
    end
    redis.call('HSET', A, unpack(set))
    if gone and #gone > 0 then redis.call('HDEL', A, unpack(gone)) end
    redis.call('PEXPIRE', A, ttl)
    redis.call('PEXPIRE', X, ttl)
  end
  out[e] = struct.pack(fmt, unpack(res, 1, n))
end
return out`;

const SHA = createHash('sha1').update(AGGREGATE_LUA).digest('hex');

/** ioredis's binary-reply forms of EVALSHA and EVAL (present at run time on `Redis` and `Cluster`, not typed). */
interface BinaryScripting {
  evalshaBuffer(sha: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  evalBuffer(lua: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/**
 * Runs the script by EVALSHA with a binary reply (the values are packed doubles), falling back to EVAL (which
 * also loads it) when the server does not know it yet (`NOSCRIPT`, e.g. after a restart).
 */
export async function runAggregateScript(
  client: Redis | Cluster,
  keys: readonly string[],
  args: readonly (string | number)[],
): Promise<unknown> {
  const c = client as unknown as BinaryScripting;
  try {
    return await c.evalshaBuffer(SHA, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return c.evalBuffer(AGGREGATE_LUA, keys.length, ...keys, ...args);
  }
}
