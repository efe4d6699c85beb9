-- A quota (included): at most `quota` counted in a window of `window` ms that starts with the first one counted.
-- quota_wait answers the ms until the window ends once the quota is used up, 0 while some is left.
local function quota_wait(key, quota, window)
  if quota <= 0 then return 0 end
  if tonumber(redis.call('GET', key) or '0') < quota then return 0 end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, window) ttl = window end
  return ttl
end
local function quota_count(key, quota, window)
  if quota > 0 and redis.call('INCR', key) == 1 then redis.call('PEXPIRE', key, window) end
end
