-- Takes the player's entry off a board if it is still `member`, the one kept (a better one entered since stays):
-- OK, or UNCHANGED.
if redis.call('HGET', KEYS.best, ARGV.player) ~= ARGV.member then return RESULT.UNCHANGED end
redis.call('ZREM', KEYS.ranked, ARGV.member)
redis.call('ZREM', KEYS.apps, ARGV.member)
redis.call('ZREM', KEYS.anonymous, ARGV.member)
redis.call('HDEL', KEYS.best, ARGV.player)
redis.call('HDEL', KEYS.entries, ARGV.player)
redis.call('PUBLISH', KEYS.ranked, redis.call('INCR', KEYS.changes))  -- the board's live streams
return RESULT.OK
