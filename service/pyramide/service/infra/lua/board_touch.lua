-- A board's GET shows more than its entries (the deal's par, a challenge's close): when that changed since the
-- board's change counter last grew for it (ARGV.state, kept ARGV.ttl_s seconds), the counter grows and the board's
-- live streams are told, as when an entry changes: OK; UNCHANGED when it is what was shown.
-- The counter of a board nobody has entered lives no longer than what was shown; board_enter.lua keeps it for good
-- from the first entry. ARGV.create '0' (a stream's read): a board with no counter is left as it is, so a stream
-- opened on any code writes nothing.
--! include board_changed
if redis.call('GET', KEYS.shown) == ARGV.state then return RESULT.UNCHANGED end
if ARGV.create == '0' and redis.call('EXISTS', KEYS.changes) == 0 then return RESULT.UNCHANGED end
redis.call('SET', KEYS.shown, ARGV.state, 'EX', ARGV.ttl_s)
board_changed(KEYS.changes, KEYS.ranked, false, ARGV.ttl_s)  -- the board's live streams
return RESULT.OK
