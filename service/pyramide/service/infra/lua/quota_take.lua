-- Counts one against a quota: answers 0, or the ms until the used-up quota starts afresh (nothing counted).
--! include quota
local over = quota_wait(KEYS.counter, tonumber(ARGV.quota), tonumber(ARGV.window))
if over > 0 then return over end
quota_count(KEYS.counter, tonumber(ARGV.quota), tonumber(ARGV.window))
return 0
