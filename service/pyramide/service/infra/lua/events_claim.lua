-- Claims one outbox due now (see events/delivery.py): its score moves to now + the lease, so no other process takes
-- it while this one works on it, and a process that dies holding it lets it go when the lease runs out.
local due = redis.call('ZRANGEBYSCORE', KEYS.due, '-inf', ARGV.now, 'LIMIT', 0, 1)
if #due == 0 then return false end
local lease = tonumber(ARGV.now) + tonumber(ARGV.lease_ms)
redis.call('ZADD', KEYS.due, lease, due[1])
return {due[1], redis.call('ZSCORE', KEYS.due, due[1])}
