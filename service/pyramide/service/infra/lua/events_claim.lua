-- Claims one outbox due now (see events/delivery.py): its claim, in KEYS.claims, holds the end of its lease, so no
-- other process takes it while this one works on it, and a process that dies holding it lets it go when the lease
-- runs out. Its due time stays as it is, so an event marked due meanwhile is not lost (see events_release).
local now = tonumber(ARGV.now)
for _, outbox in ipairs(redis.call('ZRANGEBYSCORE', KEYS.due, '-inf', now, 'LIMIT', 0, 64)) do
  local held = tonumber(redis.call('HGET', KEYS.claims, outbox) or '0')
  if held <= now then
    local lease = tostring(now + tonumber(ARGV.lease_ms))
    redis.call('HSET', KEYS.claims, outbox, lease)
    return {outbox, lease}
  end
end
return false
