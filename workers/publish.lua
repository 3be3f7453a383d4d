-- Publish an immutable snapshot and move the tenant's latest pointer, if it
-- still points where the publisher started from (compare-and-set).
-- KEYS[1] blob key, KEYS[2] latest pointer, KEYS[3] ladder list
-- ARGV[1] blob, ARGV[2] new position, ARGV[3] expected old position ("" = none),
-- ARGV[4] snapshots kept, ARGV[5] blob key prefix,
-- ARGV[6] the base this snapshot is a delta of ("" = a full snapshot): never trimmed
-- while its newest delta is kept (it goes back to the end of the ladder once)
-- Returns 1 when published, 0 when another publisher moved the pointer first.
local current = redis.call('GET', KEYS[2]) or ''
if current ~= ARGV[3] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[2])
local keep = tonumber(ARGV[4])
local base = ARGV[6]
if base ~= '' and keep < 2 then
  keep = 2
end
local spared = false
while redis.call('LLEN', KEYS[3]) > keep do
  local old = redis.call('LPOP', KEYS[3])
  if old == base and not spared then
    redis.call('RPUSH', KEYS[3], old)
    spared = true
  else
    redis.call('DEL', ARGV[5] .. old)
  end
end
return 1
