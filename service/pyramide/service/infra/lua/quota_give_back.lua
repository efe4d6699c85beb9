-- Gives back one taken from a quota, for a request that in the end stored nothing.
if tonumber(redis.call('GET', KEYS.counter) or '0') > 0 then redis.call('DECR', KEYS.counter) end
return 0
