-- Renews the claim on an outbox (see events/delivery.py) while its holder still works on it: the lease runs out
-- ARGV.lease_ms from now instead. Answers the new lease, or false when the claim is no longer the holder's (it ran
-- out and another process took the outbox): the holder then stops.
if redis.call('HGET', KEYS.claims, ARGV.outbox) ~= ARGV.lease then return false end
local lease = string.format('%d', tonumber(ARGV.now) + tonumber(ARGV.lease_ms))
redis.call('HSET', KEYS.claims, ARGV.outbox, lease)
local score = redis.call('ZSCORE', KEYS.due, ARGV.outbox)
if score == ARGV.lease then
  redis.call('ZADD', KEYS.due, lease, ARGV.outbox)
elseif score and tonumber(score) > tonumber(ARGV.now) then
  redis.call('ZADD', KEYS.due, lease + 1, ARGV.outbox)
end
return lease
