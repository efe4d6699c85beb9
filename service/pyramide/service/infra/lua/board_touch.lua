-- A board's GET shows more than its entries (the deal's par, a challenge's close): when that changed since the
-- board's change counter last grew for it (ARGV.state, kept ARGV.ttl_s seconds), the counter grows and the board's
-- live streams are told, as when an entry changes: OK; UNCHANGED when it is what was shown.
if redis.call('GET', KEYS.shown) == ARGV.state then return RESULT.UNCHANGED end
redis.call('SET', KEYS.shown, ARGV.state, 'EX', ARGV.ttl_s)
redis.call('PUBLISH', KEYS.ranked, redis.call('INCR', KEYS.changes))  -- the board's live streams
return RESULT.OK
