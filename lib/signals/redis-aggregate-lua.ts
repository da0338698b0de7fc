/**
 * The Lua script of the Redis aggregate store (lib/signals/redis-aggregate-store.ts): the ring of
 * lib/signals/aggregate-ring.ts kept as hash fields, and the idempotency records.
 * @module
 */
import { BUCKETS } from './aggregate-store';
import { SLOTS } from './aggregate-ring';

/**
 * KEYS: per entity 3 keys in one hash tag: `A` the rings (hash), `X` the recorded transactions (zset txid → at),
 * `R` their answers (hash txid → `id=value` lines).
 * ARGV: txid, at, records kept per entity, member width; then per entity: key TTL ms, n; then per aggregate:
 * id, op (c s a m d), current bucket, cap, addend (`''` when the payment is not counted).
 *
 * Ring fields: `<id>:<slot>` → `<bucket>|<value>` (count, sum, max), `<bucket>|<count>|<sum>` (avg),
 * `<bucket>|<members>` (distinct: fixed-width hashed members, concatenated). Per entity the script reads the
 * transaction's answer (an aggregate already answered keeps its answer and is not counted again), reads the rings
 * of the others (one HMGET), adds the payment to each counted one, reads its window, writes the changed slots (one
 * HSET), records the answer, drops the oldest records beyond the cap (ZPOPMIN), and sets the TTL of the 3 keys to
 * the larger of theirs and this group's (a version with shorter windows never shortens a longer one's).
 * Per call the work is bounded by the aggregates and their caps, never by the payments an entity has seen.
 * Values travel as `%.17g` strings (a Lua number would be truncated to an integer in a Redis reply).
 * Returns per entity an array of its aggregates' values, in the order given.
 */
export const AGGREGATE_LUA = `
local tx, at, keep, w = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local S, B = ${SLOTS}, ${BUCKETS}
local function fmt(x) return string.format('%.17g', x) end
local function slot(s)
  if not s then return nil end
  local p = string.find(s, '|', 1, true)
  return tonumber(string.sub(s, 1, p - 1)), string.sub(s, p + 1)
end
local function has(m, v)
  local i = 1
  while true do
    local p = string.find(m, v, i, true)
    if not p then return false end
    if (p - 1) % w == 0 then return true end
    i = p + 1
  end
end
local function pair(pl)
  local p = string.find(pl, '|', 1, true)
  return tonumber(string.sub(pl, 1, p - 1)), tonumber(string.sub(pl, p + 1))
end
local function add(op, s, cur, c, cap, v)
  local id, pl = slot(s)
  if id and id > cur then return nil end
  if not id or id < cur then
    if op == 'c' then return c .. '|1' end
    if op == 'a' then return c .. '|1|' .. v end
    return c .. '|' .. v
  end
  if op == 'c' then return c .. '|' .. (tonumber(pl) + 1) end
  if op == 's' then return c .. '|' .. fmt(tonumber(pl) + tonumber(v)) end
  if op == 'm' then
    if tonumber(v) > tonumber(pl) then return c .. '|' .. v end
    return nil
  end
  if op == 'a' then
    local n, sum = pair(pl)
    return c .. '|' .. (n + 1) .. '|' .. fmt(sum + tonumber(v))
  end
  if #pl >= cap * w or has(pl, v) then return nil end
  return s .. v
end
local function read(op, vals, base, cur, cap)
  local lo = cur - B
  local a, b, mx, sets = 0, 0, nil, nil
  for j = 1, S do
    local id, pl = slot(vals[base + j])
    if id and id >= lo and id <= cur then
      if op == 'd' then
        if #pl >= cap * w then return cap end
        sets = sets or {}
        sets[#sets + 1] = pl
      elseif op == 'm' then
        local x = tonumber(pl)
        if mx == nil or x > mx then mx = x end
      elseif op == 'a' then
        local n, sum = pair(pl)
        a, b = a + n, b + sum
      else
        a = a + tonumber(pl)
      end
    end
  end
  if op == 'd' then
    if not sets then return 0 end
    if #sets == 1 then return math.min(#sets[1] / w, cap) end
    local seen, n = {}, 0
    for _, pl in ipairs(sets) do
      for p = 1, #pl, w do
        local m = string.sub(pl, p, p + w - 1)
        if not seen[m] then seen[m], n = true, n + 1 end
      end
    end
    return math.min(n, cap)
  end
  if op == 'm' then return mx or 0 end
  if op == 'a' then
    if a == 0 then return 0 end
    return b / a
  end
  return a
end
local out, ai = {}, 5
for e = 1, #KEYS / 3 do
  local A, X, R = KEYS[3 * e - 2], KEYS[3 * e - 1], KEYS[3 * e]
  local ttl, n, first = tonumber(ARGV[ai]), tonumber(ARGV[ai + 1]), ai + 2
  ai = first + 5 * n
  local res, known, todo, fields = {}, {}, {}, {}
  local prev = redis.call('HGET', R, tx)
  if prev then
    for id, v in string.gmatch(prev, '([^\\n=]+)=([^\\n]*)') do known[id] = v end
  end
  for k = 0, n - 1 do
    local o = first + 5 * k
    local v = known[ARGV[o]]
    if v then
      res[k + 1] = v
    else
      todo[#todo + 1] = k
      for j = 0, S - 1 do fields[#fields + 1] = ARGV[o] .. ':' .. j end
    end
  end
  if #todo > 0 then
    local vals = redis.call('HMGET', A, unpack(fields))
    local set, rec = {}, {}
    for t, k in ipairs(todo) do
      local o = first + 5 * k
      local id, op, c, cap, v = ARGV[o], ARGV[o + 1], ARGV[o + 2], tonumber(ARGV[o + 3]), ARGV[o + 4]
      local cur, base = tonumber(c), (t - 1) * S
      if v ~= '' then
        local si = cur % S
        local new = add(op, vals[base + si + 1], cur, c, cap, v)
        if new then
          vals[base + si + 1] = new
          set[#set + 1] = id .. ':' .. si
          set[#set + 1] = new
        end
      end
      local r = fmt(read(op, vals, base, cur, cap))
      res[k + 1] = r
      rec[#rec + 1] = id .. '=' .. r
    end
    local left = redis.call('PTTL', A)
    if left > ttl then ttl = left end
    if #set > 0 then redis.call('HSET', A, unpack(set)) end
    local line = table.concat(rec, '\\n')
    if prev then line = prev .. '\\n' .. line end
    redis.call('HSET', R, tx, line)
    if redis.call('ZADD', X, 'NX', at, tx) == 1 then
      local over = redis.call('ZCARD', X) - keep
      if over > 0 then
        local old, gone = redis.call('ZPOPMIN', X, over), {}
        for i = 1, #old, 2 do gone[#gone + 1] = old[i] end
        redis.call('HDEL', R, unpack(gone))
      end
    end
    redis.call('PEXPIRE', A, ttl)
    redis.call('PEXPIRE', X, ttl)
    redis.call('PEXPIRE', R, ttl)
  end
  out[e] = res
end
return out`;
