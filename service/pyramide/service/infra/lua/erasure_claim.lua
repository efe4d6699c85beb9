-- For the earliest erasure due (ARGV.due_ms, Redis's time when its tombstone is gone): {LIMITED, ms} wait that
-- long; {UNCHANGED, at} a rewrite asked for at `at` covers every erasure due by then; {OK, now} this process asks
-- for the rewrite (at most one every ARGV.interval_ms), which covers every erasure due by `now`.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local due = tonumber(ARGV.due_ms)
if now < due then return {RESULT.LIMITED, due - now} end
local last = tonumber(redis.call('GET', KEYS.rewritten) or '0')
if last >= due then return {RESULT.UNCHANGED, last} end
local next = last + tonumber(ARGV.interval_ms)
if now < next then return {RESULT.LIMITED, next - now} end
redis.call('SET', KEYS.rewritten, now)
return {RESULT.OK, now}
