-- The last step of a log rewrite, atomic: copy what was appended since the copy's last entry,
-- keep the log's last id (no id handed out is ever handed out again), put the copy in the
-- log's place and raise the tenant's epoch.
-- KEYS[1] log, KEYS[2] copy, KEYS[3] epoch; ARGV[1] the last id copied ("0-0": none)
local last = '0-0'
if redis.call('EXISTS', KEYS[1]) == 1 then
  local info = redis.call('XINFO', 'STREAM', KEYS[1])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then last = info[i + 1] end
  end
  local tail = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+')
  for _, entry in ipairs(tail) do
    redis.call('XADD', KEYS[2], entry[1], unpack(entry[2]))
  end
end
if last ~= '0-0' then
  if redis.call('EXISTS', KEYS[2]) == 0 then
    redis.call('XADD', KEYS[2], last, 'e', '')
    redis.call('XDEL', KEYS[2], last)
  else
    redis.call('XSETID', KEYS[2], last)
  end
  redis.call('RENAME', KEYS[2], KEYS[1])
end
return redis.call('INCR', KEYS[3])
