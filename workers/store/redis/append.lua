-- Append a batch of events to a tenant's log, once per idempotency key, and raise the
-- tenant's fold flag (a count, see ports.EventLog.fold_wanted) in the same atomic step.
-- Every key it touches is given in KEYS and carries the tenant's hash tag, so the script
-- runs on a Redis Cluster node as on one Redis (the tenant registry is written beside it,
-- by the caller, before the script: workers/store/redis/stores.py).
-- KEYS[1] log stream, KEYS[2] fold-wanted flag, KEYS[3] the state of the tenant's seen
-- keys, then per keyed event three keys: its bucket in this generation, its bucket in the
-- generation before, and the key as a string of its own (where keys were kept before
-- buckets: read, never written).
-- ARGV[1] event count n, ARGV[2] idempotency TTL (s), ARGV[3] the generation the caller
-- named the buckets for, then per event: payload, index of its first bucket in KEYS
-- (0 = no key), fingerprint of the request, the key.
-- A seen key is a field of a hash per bucket and generation (TIME / TTL): a key is
-- looked for in this generation and the one before, and written in this one. So a key is
-- remembered at least the TTL, at most twice it, and Redis holds tens of thousands of
-- small hashes instead of a key (and an expiry) per event. A bucket expires twice the TTL
-- after it is made, once no lookup can read it. The generation is Redis's, not the
-- caller's clock: named for another, the batch fails whole with GENERATION <g>, and the
-- caller names the buckets again.
-- A key kept as a string is looked for only in the TTL after the first bucket of a tenant
-- that had a log then: none is younger.
-- Its value is "<position> <fingerprint>". A key seen before with another fingerprint
-- fails the whole batch, before anything is appended: KEYCONFLICT <index>.
-- Returns, per event, {position, 1 if it was already stored else 0}, and for an event it
-- stores the position of the entry just before it in the log ('0-0' for the first).
local n = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local now = tonumber(redis.call('TIME')[1])
local generation = math.floor(now / ttl)
if generation ~= tonumber(ARGV[3]) then
  return redis.error_reply('GENERATION ' .. generation)
end
local since = tonumber(redis.call('HGET', KEYS[3], 'since'))
if not since then -- the first append since buckets: of a new (or erased) tenant, whose log
  -- does not exist, or of one whose keys an earlier version kept as strings
  since = redis.call('EXISTS', KEYS[1]) == 1 and now or now - ttl
  redis.call('HSET', KEYS[3], 'since', since)
end
local strings = now < since + ttl
local function argument(i, field)
  return ARGV[3 + 4 * (i - 1) + field]
end
local function split(value)
  local space = string.find(value, ' ', 1, true)
  if not space then
    return value, nil
  end
  return string.sub(value, 1, space - 1), string.sub(value, space + 1)
end
-- Per keyed event, the value its key was stored with before this batch (false if none),
-- looked up once, and its bucket in this generation; per key, what this batch stored.
local before, buckets, added = {}, {}, {}
for i = 1, n do
  local k = tonumber(argument(i, 2))
  if k > 0 then
    local key = argument(i, 4)
    buckets[i] = KEYS[k]
    before[i] = redis.call('HGET', KEYS[k], key)
      or redis.call('HGET', KEYS[k + 1], key)
      or (strings and redis.call('GET', KEYS[k + 2]))
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
      if redis.call('HSET', bucket, key, added[key]) == 1 and redis.call('TTL', bucket) == -1 then
        redis.call('EXPIRE', bucket, 2 * ttl)
      end
    end
    out[i] = {id, 0, previous}
    previous = id
  end
end
redis.call('INCR', KEYS[2])
return out
