-- Append entries at the positions they name (an import that keeps its source's positions),
-- atomically, and only if every one comes after the stream's last id (entries trimmed off
-- by the archive included): else nothing is appended and 0 is returned.
-- KEYS[1] log stream, KEYS[2] fold-wanted flag (the tenant registry is written beside it,
-- by the caller, before the script, as append.lua's).
-- ARGV: per entry, its id then its payload, in ascending order of ids.
local function parts(id)
  local dash = string.find(id, '-', 1, true)
  return tonumber(string.sub(id, 1, dash - 1)), tonumber(string.sub(id, dash + 1))
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  local last = '0-0'
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then
      last = info[i + 1]
    end
  end
  local last_ms, last_seq = parts(last)
  local ms, seq = parts(ARGV[1])
  if ms < last_ms or (ms == last_ms and seq <= last_seq) then
    return 0
  end
end
for i = 1, #ARGV, 2 do
  redis.call('XADD', KEYS[1], ARGV[i], 'e', ARGV[i + 1])
end
redis.call('INCR', KEYS[2])
return 1
