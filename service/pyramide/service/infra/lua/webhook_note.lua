-- Writes one delivery's state to its endpoint's log (see events/store.py), only while the endpoint is still in its
-- app's hash: a delivery in flight when its endpoint is deleted (or its app revoked) writes nothing after the log
-- went with it. The log keeps the newest CONST.KEPT deliveries.
if redis.call('HEXISTS', KEYS.webhooks, ARGV.endpoint) == 0 then return RESULT.MISSING end
redis.call('HSET', KEYS.deliveries, ARGV.event, ARGV.delivery)
redis.call('ZADD', KEYS.log, ARGV.created, ARGV.event)
local over = redis.call('ZCARD', KEYS.log) - CONST.KEPT
while over > 0 do
  local old = redis.call('ZRANGE', KEYS.log, 0, math.min(over, 500) - 1)
  redis.call('ZREM', KEYS.log, unpack(old))
  redis.call('HDEL', KEYS.deliveries, unpack(old))
  over = over - #old
end
return RESULT.OK
