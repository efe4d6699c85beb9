-- Lets a claimed outbox go (see events/delivery.py): due again at ARGV.next (ms), or out of the due set when
-- ARGV.next is '' (nothing left), but only if its score is still the claim's lease: an outbox marked due meanwhile
-- (a new event) keeps its new score.
local score = redis.call('ZSCORE', KEYS.due, ARGV.outbox)
if score ~= ARGV.lease then return 0 end
if ARGV.next == '' then
  redis.call('ZREM', KEYS.due, ARGV.outbox)
else
  redis.call('ZADD', KEYS.due, ARGV.next, ARGV.outbox)
end
return 1
