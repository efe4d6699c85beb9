-- Takes one challenge win to screen (see games/screen_queue.py), unless a process holds it (its lease has not run
-- out) or it waits to be tried again: then 0, and nothing is written. Else it is leased to the caller: 1.
local held = tonumber(redis.call('ZSCORE', KEYS.due, ARGV.member))
if held and held > tonumber(ARGV.now) then
  return 0
end
redis.call('ZADD', KEYS.due, string.format('%d', tonumber(ARGV.now) + tonumber(ARGV.lease_ms)), ARGV.member)
return 1
