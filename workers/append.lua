-- Append a batch of events to a tenant's log, once per idempotency key, and register the
-- tenant and flag a fold in the same atomic step.
-- KEYS[1] log stream, KEYS[2] fold-wanted flag, KEYS[3] tenant registry, KEYS[4..] idempotency keys
-- ARGV[1] event count n, ARGV[2] idempotency TTL (s), ARGV[3] tenant,
-- then per event: payload, index into KEYS[4..] (0 = no key)
-- Returns, per event, {position, 1 if it was already stored else 0}.
local n = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local out = {}
for i = 1, n do
  local payload = ARGV[2 + 2 * i]
  local k = tonumber(ARGV[3 + 2 * i])
  local existing = false
  if k > 0 then
    existing = redis.call('GET', KEYS[3 + k])
  end
  if existing then
    out[i] = {existing, 1}
  else
    local id = redis.call('XADD', KEYS[1], '*', 'e', payload)
    if k > 0 then
      redis.call('SET', KEYS[3 + k], id, 'EX', ttl)
    end
    out[i] = {id, 0}
  end
end
redis.call('SET', KEYS[2], '1')
redis.call('SADD', KEYS[3], ARGV[3])
return out
