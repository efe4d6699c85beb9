-- Takes a player's entry off a deal's board and its rankings: OK, or MISSING when it had none. For good (an
-- erasure, an annulment, a win withdrawn): an app player's challenge entry emits challenge.entry 'left'.
--! include emit_event
--! include board_left
--! include board_changed
local member = redis.call('HGET', KEYS.best, ARGV.player)
if member then
  redis.call('ZREM', KEYS.ranked, member)
  redis.call('ZREM', KEYS.apps, member)
  redis.call('ZREM', KEYS.anonymous, member)
end
redis.call('HDEL', KEYS.best, ARGV.player)
redis.call('HDEL', KEYS.entries, ARGV.player)
if member then
  board_left(ARGV.player, ARGV.at_ms, true)
  board_changed(KEYS.changes, KEYS.ranked, true)  -- the board's live streams
  return RESULT.OK
end
redis.call('HDEL', KEYS.event_ids, ARGV.player)
return RESULT.MISSING
