-- Takes a review away wherever it is noted.
local member = redis.call('HGET', KEYS.order, ARGV.review)
if member then redis.call('ZREM', KEYS.queue, member) end
redis.call('HDEL', KEYS.items, ARGV.review)
redis.call('HDEL', KEYS.order, ARGV.review)
redis.call('ZREM', KEYS.challenge, ARGV.review)
return RESULT.OK
