-- A board's GET shows more than its entries (the deal's par, a challenge's close): when that changed since the
-- board's change counter last grew for it (ARGV.state, kept ARGV.ttl_s seconds), the counter grows and the board's
-- live streams are told, as when an entry changes: OK; UNCHANGED when it is what was shown.
-- The counter of a board nobody has entered lives no longer than what was shown (a stream opened on any code leaves
-- nothing for good); board_enter.lua keeps it for good from the first entry.
if redis.call('GET', KEYS.shown) == ARGV.state then return RESULT.UNCHANGED end
redis.call('SET', KEYS.shown, ARGV.state, 'EX', ARGV.ttl_s)
local changes = redis.call('INCR', KEYS.changes)
if redis.call('EXISTS', KEYS.ranked) == 0 then redis.call('EXPIRE', KEYS.changes, ARGV.ttl_s) end
redis.call('PUBLISH', KEYS.ranked, changes)  -- the board's live streams
return RESULT.OK
