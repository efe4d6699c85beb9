-- Whether a delivery may try an endpoint now (see events/store.py, WebhookStore.gate): {RESULT.FORBIDDEN} when it is
-- disabled; {RESULT.LIMITED, <ms>} when it is failing and its next probe is not due yet, or another attempt (of any
-- outbox) is probing it (then look again within ARGV.recheck_ms: its outcome may free the endpoint); else
-- {RESULT.OK} ({RESULT.OK, 1} for the probe of a failing endpoint). The attempt let through at a failing endpoint holds the probe for ARGV.hold_ms (until its outcome
-- is noted), so the other outboxes wait for that outcome instead of each trying the endpoint.
local health = redis.call('HMGET', KEYS.health, 'disabled_at', 'failing_since', 'next_probe', 'probing_until')
if health[1] then return {RESULT.FORBIDDEN} end
if not health[2] then return {RESULT.OK} end
local now = tonumber(ARGV.now)
local probe = tonumber(health[3] or '0')
if probe > now then return {RESULT.LIMITED, probe} end
local probing = tonumber(health[4] or '0')
if probing > now then return {RESULT.LIMITED, math.min(probing, now + tonumber(ARGV.recheck_ms))} end
redis.call('HSET', KEYS.health, 'probing_until', string.format('%d', now + tonumber(ARGV.hold_ms)))
return {RESULT.OK, 1}
