-- Notes an attempt's outcome in its endpoint's health (see events/store.py, WebhookStore.outcome). A success: the
-- endpoint is failing no more. A failure: it is failing since now unless it was already; failing for
-- ARGV.disable_after_ms or more, it is disabled ({RESULT.FORBIDDEN}); else its next probe is after the wait that
-- ARGV.waits (the retry schedule, ms, comma-separated) gives the attempt after this many failures in a row. A disabled
-- endpoint stays disabled. While it is failing, only its probe's failure (ARGV.probe, the attempt webhook_gate.lua
-- let through) counts, and lets the probe go: the attempts in flight when it began to fail (up to PER_APP of a
-- process) are one outage, not as many failures in a row. An endpoint no longer in its app's hash (deleted, or its
-- app revoked, while the attempt was in flight) gets no health written again.
if redis.call('HEXISTS', KEYS.webhooks, ARGV.endpoint) == 0 then return {RESULT.OK} end
local now = tonumber(ARGV.now)
if ARGV.ok == '1' then
  redis.call('HSET', KEYS.health, 'last_success', ARGV.now)
  redis.call('HDEL', KEYS.health, 'failing_since', 'failures', 'next_probe', 'probing_until')
  return {RESULT.OK}
end
if redis.call('HEXISTS', KEYS.health, 'disabled_at') == 1 then return {RESULT.FORBIDDEN} end
if ARGV.probe ~= '1' and redis.call('HEXISTS', KEYS.health, 'failing_since') == 1 then return {RESULT.OK} end
redis.call('HDEL', KEYS.health, 'probing_until')
redis.call('HSETNX', KEYS.health, 'failing_since', ARGV.now)
local since = tonumber(redis.call('HGET', KEYS.health, 'failing_since'))
local failures = redis.call('HINCRBY', KEYS.health, 'failures', 1)
if now - since >= tonumber(ARGV.disable_after_ms) then
  redis.call('HSET', KEYS.health, 'disabled_at', ARGV.now, 'disabled_reason', 'failing')
  redis.call('HDEL', KEYS.health, 'next_probe')
  return {RESULT.FORBIDDEN}
end
local waits = {}
for wait in string.gmatch(ARGV.waits, '%d+') do waits[#waits + 1] = tonumber(wait) end
local wait = waits[math.min(failures + 1, #waits)] or 0
redis.call('HSET', KEYS.health, 'next_probe', string.format('%d', now + wait))
return {RESULT.OK}
