-- Decides a pending review: OK; MISSING when there is no such review; CONFLICT when it was decided meanwhile.
local member = redis.call('HGET', KEYS.order, ARGV.review)
if not member then return RESULT.MISSING end
if string.sub(member, 1, 1) ~= '0' then return RESULT.CONFLICT end
redis.call('ZREM', KEYS.queue, member)
redis.call('ZADD', KEYS.queue, 0, ARGV.member)
redis.call('HSET', KEYS.order, ARGV.review, ARGV.member)
redis.call('HSET', KEYS.items, ARGV.review, ARGV.item)
return RESULT.OK
