-- Claims one outbox due now (see events/delivery.py): its score moves to now + the lease and its claim is noted in
-- KEYS.claims, so no other process takes it while this one works on it, and a process that dies holding it lets it
-- go when the lease runs out. An outbox marked due again while claimed (a new event) is skipped: it becomes due when
-- its lease ends, and its holder makes it due at once when it lets it go (events_release.lua).
local now = tonumber(ARGV.now)
local due = redis.call('ZRANGEBYSCORE', KEYS.due, '-inf', ARGV.now, 'LIMIT', 0, 16)
for _, outbox in ipairs(due) do
  local held = tonumber(redis.call('HGET', KEYS.claims, outbox))
  if held and held > now then
    redis.call('ZADD', KEYS.due, held + 1, outbox)
  else
    local lease = string.format('%d', now + tonumber(ARGV.lease_ms))
    redis.call('ZADD', KEYS.due, lease, outbox)
    redis.call('HSET', KEYS.claims, outbox, lease)
    return {outbox, lease}
  end
end
return false
