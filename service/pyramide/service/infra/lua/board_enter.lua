-- Enters a player's win on a deal's board, keeping the better of the player's old and new entry: OK when it is the
-- player's new best, UNCHANGED when the old one was as good.
local old = redis.call('HGET', KEYS.best, ARGV.player)
if old and old <= ARGV.member then return RESULT.UNCHANGED end
if old then
  redis.call('ZREM', KEYS.ranked, old)
  redis.call('ZREM', KEYS.apps, old)
  redis.call('ZREM', KEYS.anonymous, old)
end
redis.call('ZADD', KEYS.ranked, 0, ARGV.member)
if ARGV.identity == 'app' then
  redis.call('ZADD', KEYS.apps, 0, ARGV.member)
else
  redis.call('ZADD', KEYS.anonymous, 0, ARGV.member)
end
redis.call('HSET', KEYS.best, ARGV.player, ARGV.member)
redis.call('HSET', KEYS.entries, ARGV.player, ARGV.entry)
redis.call('PUBLISH', KEYS.ranked, redis.call('INCR', KEYS.changes))  -- the board's live streams
return RESULT.OK
