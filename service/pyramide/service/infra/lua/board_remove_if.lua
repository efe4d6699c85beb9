-- Takes the player's entry off a board if it is still `member`, the one kept (a better one entered since stays):
-- OK, or UNCHANGED. A ban's: an app player's challenge entry emits challenge.entry 'left', and the ids its events
-- name it by stay, for the entry a lifted ban puts back.
--! include emit_event
--! include board_left
--! include board_changed
if redis.call('HGET', KEYS.best, ARGV.player) ~= ARGV.member then return RESULT.UNCHANGED end
redis.call('ZREM', KEYS.ranked, ARGV.member)
redis.call('ZREM', KEYS.apps, ARGV.member)
redis.call('ZREM', KEYS.anonymous, ARGV.member)
redis.call('HDEL', KEYS.best, ARGV.player)
redis.call('HDEL', KEYS.entries, ARGV.player)
board_left(ARGV.player, ARGV.at_ms, false)
board_changed(KEYS.changes, KEYS.ranked, true)  -- the board's live streams
return RESULT.OK
