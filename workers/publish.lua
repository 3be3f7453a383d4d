-- Publish an immutable snapshot and move the tenant's latest pointer, if it
-- still points where the publisher started from (compare-and-set).
-- KEYS[1] blob key, KEYS[2] latest pointer, KEYS[3] ladder list
-- ARGV[1] blob, ARGV[2] new position, ARGV[3] expected old position ("" = none),
-- ARGV[4] snapshots kept, ARGV[5] blob key prefix
-- Returns 1 when published, 0 when another publisher moved the pointer first.
local current = redis.call('GET', KEYS[2]) or ''
if current ~= ARGV[3] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[2])
local keep = tonumber(ARGV[4])
while redis.call('LLEN', KEYS[3]) > keep do
  local old = redis.call('LPOP', KEYS[3])
  redis.call('DEL', ARGV[5] .. old)
end
return 1
