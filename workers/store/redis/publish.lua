-- Publish a snapshot (never changed after, unless replaced as below) and move the tenant's latest pointer, if it
-- still points where the publisher started from (compare-and-set); then trim the
-- ladder of kept snapshots by the rule of stores.Ladder.retained.
-- KEYS[1] blob key, KEYS[2] latest pointer, KEYS[3] ladder list, KEYS[4] bases hash,
-- KEYS[5] events-folded hash, KEYS[6] digests hash
-- ARGV[1] blob, ARGV[2] new position, ARGV[3] expected old position ("" = none),
-- ARGV[4] blob key prefix, ARGV[5] the base this snapshot is a delta of ("" = full),
-- ARGV[6] recent kept, ARGV[7] hours kept, ARGV[8] days kept,
-- ARGV[9] events folded into it, ARGV[10] events a stride (0 = none), ARGV[11] strides kept,
-- ARGV[12] the SHA-256 of a full snapshot ("" for a delta)
-- At the expected position itself, the snapshot replaces the one there.
-- Returns 1 when published, 0 when another publisher moved the pointer first.
local current = redis.call('GET', KEYS[2]) or ''
if current ~= ARGV[3] then
  return 0
end
if ARGV[2] == current then
  -- the latest snapshot again, replacing it (a readable copy of one that is not)
  redis.call('LREM', KEYS[3], 0, current)
  redis.call('HDEL', KEYS[4], current)
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[2])
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[5])
end
redis.call('HSET', KEYS[5], ARGV[2], ARGV[9])
if ARGV[12] ~= '' then
  redis.call('HSET', KEYS[6], ARGV[2], ARGV[12])
end

local all = redis.call('LRANGE', KEYS[3], 0, -1)
local n = #all
local function ms(position)
  return tonumber(string.match(position, '^(%d+)-'))
end
local keep = {}
for i = math.max(1, n - tonumber(ARGV[6]) + 1), n do
  keep[all[i]] = true
end
local function folded(position)
  return tonumber(redis.call('HGET', KEYS[5], position) or '0')
end
local rules = {{ms, 3600000, tonumber(ARGV[7])}, {ms, 86400000, tonumber(ARGV[8])}}
if tonumber(ARGV[10]) > 0 then
  table.insert(rules, {folded, tonumber(ARGV[10]), tonumber(ARGV[11])})
end
for _, rule in ipairs(rules) do
  local measure, span, count = rule[1], rule[2], rule[3]
  local newest = measure(all[n])
  local seen = {}
  for i = n, 1, -1 do
    local at = measure(all[i])
    local bucket = math.floor(at / span)
    if newest - at < count * span and not seen[bucket] then
      seen[bucket] = true
      keep[all[i]] = true
    end
  end
end
-- Newest first: a base is older than its deltas, so the base of a kept base is kept too.
for i = n, 1, -1 do
  if keep[all[i]] then
    local base = redis.call('HGET', KEYS[4], all[i])
    if base then
      keep[base] = true
    end
  end
end
for i = 1, n do
  if not keep[all[i]] then
    redis.call('LREM', KEYS[3], 1, all[i])
    redis.call('DEL', ARGV[4] .. all[i])
    redis.call('HDEL', KEYS[4], all[i])
    redis.call('HDEL', KEYS[5], all[i])
    redis.call('HDEL', KEYS[6], all[i])
  end
end
return 1
