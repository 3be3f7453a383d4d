-- Publish a snapshot (never changed after, unless replaced as below) and move the tenant's
-- latest pointer, if it still points where the publisher started from (compare-and-set);
-- then drop the snapshots the caller found the ladder no longer keeps (ports.Ladder
-- decides, in Python: this script only checks that the ladder is the one it read).
-- KEYS[1] blob key, KEYS[2] latest pointer, KEYS[3] ladder list, KEYS[4] bases hash,
-- KEYS[5] events-folded hash, KEYS[6] digests hash, then the blob key of each snapshot
-- to drop.
-- ARGV[1] blob, ARGV[2] new position, ARGV[3] expected old position ("" = none),
-- ARGV[4] the base this snapshot is a delta of ("" = full), ARGV[5] events folded into
-- it, ARGV[6] the SHA-256 of a full snapshot ("" for a delta), ARGV[7] the ladder's
-- length when the caller read it, then the position of each snapshot to drop (in the
-- order of their keys).
-- At the expected position itself, the snapshot replaces the one there.
-- Returns 1 when published, 0 when another publisher moved the pointer first, -1 when the
-- ladder changed since the caller read it (nothing written: read it again).
local current = redis.call('GET', KEYS[2]) or ''
if current ~= ARGV[3] then
  return 0
end
if redis.call('LLEN', KEYS[3]) ~= tonumber(ARGV[7]) then
  return -1
end
if ARGV[2] == current then
  -- the latest snapshot again, replacing it (a readable copy of one that is not)
  redis.call('LREM', KEYS[3], 0, current)
  redis.call('HDEL', KEYS[4], current)
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[3], ARGV[2])
if ARGV[4] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[2], ARGV[4])
end
redis.call('HSET', KEYS[5], ARGV[2], ARGV[5])
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[6], ARGV[2], ARGV[6])
end
for i = 7, #KEYS do
  local position = ARGV[i + 1]
  redis.call('LREM', KEYS[3], 1, position)
  redis.call('DEL', KEYS[i])
  redis.call('HDEL', KEYS[4], position)
  redis.call('HDEL', KEYS[5], position)
  redis.call('HDEL', KEYS[6], position)
end
return 1
