-- Lets a claimed outbox go (see events/delivery.py), if the claim is still this one's lease: due again at ARGV.next
-- (ms), or out of the due set when ARGV.next is '' (nothing was left), unless it was marked due after the claim began
-- (ARGV.started): an event written meanwhile keeps it due.
if redis.call('HGET', KEYS.claims, ARGV.outbox) ~= ARGV.lease then return 0 end
redis.call('HDEL', KEYS.claims, ARGV.outbox)
local score = tonumber(redis.call('ZSCORE', KEYS.due, ARGV.outbox) or '-1')
if score > tonumber(ARGV.started) then return 1 end
if ARGV.next == '' then
  redis.call('ZREM', KEYS.due, ARGV.outbox)
else
  redis.call('ZADD', KEYS.due, ARGV.next, ARGV.outbox)
end
return 1
