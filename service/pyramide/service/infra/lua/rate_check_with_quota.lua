-- A rate limit and a quota of one client, in one step: a request refused by either counts against neither. Answers
-- {OK, ms the rate limit's cell stands ahead of now}, or {OVER_QUOTA or LIMITED, the ms to wait}.
--! include gcra
--! include quota
local quota, window = tonumber(ARGV.quota), tonumber(ARGV.window)
local over = quota_wait(KEYS.counter, quota, window)
if over > 0 then return {RESULT.OVER_QUOTA, over} end
local wait, ahead = gcra(KEYS.cell, tonumber(ARGV.interval), tonumber(ARGV.burst))
if wait > 0 then return {RESULT.LIMITED, wait} end
quota_count(KEYS.counter, quota, window)
return {RESULT.OK, ahead or 0}
