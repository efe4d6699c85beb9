-- Claims the challenge wins whose screening is due (see games/screen_queue.py): up to ARGV.limit members of
-- KEYS.due scored at most ARGV.now move to now + the lease, so no other process takes them while this one screens,
-- and a process that dies holding them lets them go when the lease runs out. Answers the claimed members.
local due = redis.call('ZRANGEBYSCORE', KEYS.due, '-inf', ARGV.now, 'LIMIT', 0, tonumber(ARGV.limit))
local lease = string.format('%d', tonumber(ARGV.now) + tonumber(ARGV.lease_ms))
for _, member in ipairs(due) do
  redis.call('ZADD', KEYS.due, lease, member)
end
return due
