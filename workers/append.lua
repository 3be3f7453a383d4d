-- Append a batch of events to a tenant's log, once per idempotency key, and register the
-- tenant and raise its fold flag (a count, see stores.EventLog.fold_wanted) in the same
-- atomic step.
-- KEYS[1] log stream, KEYS[2] fold-wanted flag, KEYS[3] tenant registry, KEYS[4..] idempotency keys
-- ARGV[1] event count n, ARGV[2] idempotency TTL (s), ARGV[3] tenant,
-- then per event: payload, index into KEYS[4..] (0 = no key), fingerprint of the request
-- An idempotency key holds "<position> <fingerprint>". A key seen before with another
-- fingerprint fails the whole batch, before anything is appended: KEYCONFLICT <index>.
-- Returns, per event, {position, 1 if it was already stored else 0}, and for an event it
-- stores the position of the entry just before it in the log ('0-0' for the first).
local n = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local function stored(k)
  local value = redis.call('GET', KEYS[3 + k])
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
  local k = tonumber(ARGV[3 + 3 * i - 1])
  if k > 0 then
    local position, fingerprint = stored(k)
    if position and fingerprint and fingerprint ~= ARGV[3 + 3 * i] then
      return redis.error_reply('KEYCONFLICT ' .. i)
    end
  end
end
local out = {}
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local previous = last[1] and last[1][1] or '0-0'
for i = 1, n do
  local payload = ARGV[3 + 3 * i - 2]
  local k = tonumber(ARGV[3 + 3 * i - 1])
  local position = nil
  if k > 0 then
    position = stored(k)
  end
  if position then
    out[i] = {position, 1}
  else
    local id = redis.call('XADD', KEYS[1], '*', 'e', payload)
    if k > 0 then
      redis.call('SET', KEYS[3 + k], id .. ' ' .. ARGV[3 + 3 * i], 'EX', ttl)
    end
    out[i] = {id, 0, previous}
    previous = id
  end
end
redis.call('INCR', KEYS[2])
redis.call('SADD', KEYS[3], ARGV[3])
return out
