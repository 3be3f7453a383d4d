-- Append a batch of events to a tenant's log, once per idempotency key, and register the
-- tenant and raise its fold flag (a count, see stores.EventLog.fold_wanted) in the same
-- atomic step.
-- KEYS[1] log stream, KEYS[2] fold-wanted flag, KEYS[3] tenant registry, then per keyed
-- event two keys: the bucket of seen keys its key falls in (the name without its
-- generation, see below) and the key as a string of its own (where keys were kept
-- before buckets: read, never written).
-- ARGV[1] event count n, ARGV[2] idempotency TTL (s), ARGV[3] tenant,
-- then per event: payload, index of its bucket in KEYS[4..] (0 = no key), fingerprint of
-- the request, the key's field in its bucket.
-- A seen key is a field of a hash per bucket and generation (TIME / TTL): a key is
-- looked for in this generation and the one before, and written in this one, whose hash
-- expires at the end of the next. So a key is remembered at least the TTL, at most twice
-- it, and Redis holds a few thousand small hashes instead of a key (and an expiry) per
-- event: a million of those made a restart of Redis 0.9 s slower.
-- Its value is "<position> <fingerprint>". A key seen before with another fingerprint
-- fails the whole batch, before anything is appended: KEYCONFLICT <index>.
-- Returns, per event, {position, 1 if it was already stored else 0}, and for an event it
-- stores the position of the entry just before it in the log ('0-0' for the first).
local n = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local generation = math.floor(tonumber(redis.call('TIME')[1]) / ttl)
local function argument(i, field)
  return ARGV[3 + 4 * (i - 1) + field]
end
local function stored(i)
  local k = tonumber(argument(i, 2))
  if k == 0 then
    return nil, nil
  end
  local bucket, field = KEYS[3 + k], argument(i, 4)
  local value = redis.call('HGET', bucket .. ':' .. generation, field)
    or redis.call('HGET', bucket .. ':' .. (generation - 1), field)
    or redis.call('GET', KEYS[4 + k])
  if not value then
    return nil, nil
  end
  local space = string.find(value, ' ', 1, true)
  if not space then
    return value, nil
  end
  return string.sub(value, 1, space - 1), string.sub(value, space + 1)
end
for i = 1, n do
  local position, fingerprint = stored(i)
  if position and fingerprint and fingerprint ~= argument(i, 3) then
    return redis.error_reply('KEYCONFLICT ' .. i)
  end
end
local out = {}
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local previous = last[1] and last[1][1] or '0-0'
for i = 1, n do
  local position = stored(i)
  if position then
    out[i] = {position, 1}
  else
    local id = redis.call('XADD', KEYS[1], '*', 'e', argument(i, 1))
    local k = tonumber(argument(i, 2))
    if k > 0 then
      local bucket = KEYS[3 + k] .. ':' .. generation
      redis.call('HSET', bucket, argument(i, 4), id .. ' ' .. argument(i, 3))
      if redis.call('TTL', bucket) < 0 then
        redis.call('EXPIREAT', bucket, (generation + 2) * ttl)
      end
    end
    out[i] = {id, 0, previous}
    previous = id
  end
end
redis.call('INCR', KEYS[2])
redis.call('SADD', KEYS[3], ARGV[3])
return out
