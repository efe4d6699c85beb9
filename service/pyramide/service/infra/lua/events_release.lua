-- Lets a claimed outbox go (see events/delivery.py): due again at ARGV.next (ms), or out of the due set when
-- ARGV.next is '' (nothing left), but only if its score is still the claim's lease. An outbox marked due meanwhile (a
-- new event; events_claim.lua moved it past the lease) is due at once (ARGV.now) instead.
local mine = redis.call('HGET', KEYS.claims, ARGV.outbox) == ARGV.lease
if mine then redis.call('HDEL', KEYS.claims, ARGV.outbox) end
local score = redis.call('ZSCORE', KEYS.due, ARGV.outbox)
if score == ARGV.lease then
  if ARGV.next == '' then
    redis.call('ZREM', KEYS.due, ARGV.outbox)
  else
    redis.call('ZADD', KEYS.due, ARGV.next, ARGV.outbox)
  end
  return 1
end
if mine and score and tonumber(score) > tonumber(ARGV.now) then
  redis.call('ZADD', KEYS.due, ARGV.now, ARGV.outbox)
end
return 0
