-- Append a batch of events to a tenant's log, once per idempotency key, and register the
-- tenant and raise its fold flag (a count, see stores.EventLog.fold_wanted) in the same
-- atomic step.
-- KEYS[1] log stream, KEYS[2] fold-wanted flag, KEYS[3] tenant registry, KEYS[4] the
-- state of the tenant's buckets of seen keys, then per keyed event two keys: the bucket
-- its key falls in (the name without its generation, see below) and the key as a string
-- of its own (where keys were kept before buckets: read, never written).
-- ARGV[1] event count n, ARGV[2] idempotency TTL (s), ARGV[3] tenant, ARGV[4] the
-- buckets' prefix (a bucket is the prefix, 4 hex digits, ':' and its generation), then
-- per event: payload, index of its bucket in KEYS[5..] (0 = no key), fingerprint of the
-- request, the key.
-- A seen key is a field of a hash per bucket and generation (TIME / TTL): a key is
-- looked for in this generation and the one before, and written in this one. So a key is
-- remembered at least the TTL, at most twice it, and Redis holds tens of thousands of
-- small hashes instead of a key (and an expiry) per event: a million of those made a
-- restart of Redis 0.9 s slower. The buckets of older generations are never read again:
-- each batch unlinks a slice of them (SWEEP_AT_LEAST, or as many as it has events), a
-- generation at a time, which costs far fewer calls than an expiry set on every bucket
-- as it is written. A key kept as a string is looked for only in the TTL after the first
-- bucket of a tenant that had a log then: none is younger.
-- Its value is "<position> <fingerprint>". A key seen before with another fingerprint
-- fails the whole batch, before anything is appended: KEYCONFLICT <index>.
-- Returns, per event, {position, 1 if it was already stored else 0}, and for an event it
-- stores the position of the entry just before it in the log ('0-0' for the first).
local BUCKETS = 65536 -- as workers/store/redis/keys.py seen_key picks them
local SWEEP_AT_LEAST = 1024
local n = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local prefix = ARGV[4]
local now = tonumber(redis.call('TIME')[1])
local generation = math.floor(now / ttl)
local state = redis.call('HMGET', KEYS[4], 'since', 'swept', 'cursor', 'written')
local since, swept = tonumber(state[1]), tonumber(state[2])
local cursor, written = tonumber(state[3]) or 0, tonumber(state[4]) or generation
if not since then -- the first append since buckets: of a new (or erased) tenant, whose log
  -- does not exist, or of one whose keys an earlier version kept as strings
  since = redis.call('EXISTS', KEYS[1]) == 1 and now or now - ttl
  swept = generation - 1 -- no bucket is older than this batch's
end
local strings = now < since + ttl
local budget = math.max(n, SWEEP_AT_LEAST)
while swept < generation - 2 and budget > 0 do
  local target = swept + 1
  if target > written then -- no bucket is newer than the last one written
    swept, cursor = generation - 2, 0
  else
    local upto = math.min(BUCKETS, cursor + budget)
    for bucket = cursor, upto - 1 do
      redis.call('UNLINK', prefix .. string.format('%04x', bucket) .. ':' .. target)
    end
    budget = budget - (upto - cursor)
    if upto == BUCKETS then
      swept, cursor = target, 0
    else
      cursor = upto
    end
  end
end
local function argument(i, field)
  return ARGV[4 + 4 * (i - 1) + field]
end
local function split(value)
  local space = string.find(value, ' ', 1, true)
  if not space then
    return value, nil
  end
  return string.sub(value, 1, space - 1), string.sub(value, space + 1)
end
-- Per keyed event, the value its key was stored with before this batch (false if none),
-- looked up once, and the name of its bucket in this generation; per key, what this batch
-- stored.
local current, older = ':' .. generation, ':' .. (generation - 1)
local before, buckets, added = {}, {}, {}
for i = 1, n do
  local k = tonumber(argument(i, 2))
  if k > 0 then
    local key = argument(i, 4)
    buckets[i] = KEYS[4 + k] .. current
    before[i] = redis.call('HGET', buckets[i], key)
      or redis.call('HGET', KEYS[4 + k] .. older, key)
      or (strings and redis.call('GET', KEYS[5 + k]))
    if before[i] then
      local _, fingerprint = split(before[i])
      if fingerprint and fingerprint ~= argument(i, 3) then
        return redis.error_reply('KEYCONFLICT ' .. i)
      end
    end
  end
end
local out = {}
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local previous = last[1] and last[1][1] or '0-0'
for i = 1, n do
  local bucket, value = buckets[i], nil
  if bucket then
    value = before[i] or added[argument(i, 4)]
  end
  if value then
    out[i] = {(split(value)), 1}
  else
    local id = redis.call('XADD', KEYS[1], '*', 'e', argument(i, 1))
    if bucket then
      local key = argument(i, 4)
      added[key] = id .. ' ' .. argument(i, 3)
      redis.call('HSET', bucket, key, added[key])
      written = generation
    end
    out[i] = {id, 0, previous}
    previous = id
  end
end
if tonumber(state[1]) ~= since or tonumber(state[2]) ~= swept
    or tonumber(state[3] or 0) ~= cursor or tonumber(state[4]) ~= written then
  redis.call('HSET', KEYS[4], 'since', since, 'swept', swept, 'cursor', cursor,
    'written', written)
end
redis.call('INCR', KEYS[2])
redis.call('SADD', KEYS[3], ARGV[3])
return out
