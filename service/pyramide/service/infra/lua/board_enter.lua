-- Enters a player's win on a deal's board, keeping the better of the player's old and new entry: OK when it is the
-- player's new best, UNCHANGED when the old one was as good.
-- On a challenge's board, an app player's entry (ARGV.ids: the ids its app's events name it by, JSON; '' for none;
-- 'noted' for those noted before, for an entry a lifted ban puts back) emits challenge.entry, with the change.
--! include emit_event
--! include board_changed
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
local ids = ARGV.ids
if ids == 'noted' then
  ids = redis.call('HGET', KEYS.event_ids, ARGV.player)
elseif ids ~= '' then
  redis.call('HSET', KEYS.event_ids, ARGV.player, ids)
else
  ids = false
end
if ids then
  local known = cjson.decode(ids)
  local entry = cjson.decode(ARGV.entry)
  entry.code = nil -- a sealed challenge's code never leaves in an event
  local data = cjson.encode({challenge = known.challenge, player_id = ARGV.player, external_id = known.external_id,
    change = old and 'improved' or 'entered', entry = entry})
  emit_event(KEYS.outbox, 'challenge.entry', known.app, ARGV.player, ARGV.at_ms, data)
end
board_changed(KEYS.changes, KEYS.ranked, true)  -- the board's live streams
return RESULT.OK
