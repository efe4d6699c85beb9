-- Bans a player that exists and is not being erased (else MISSING): the flag in its settings and the ban mark in
-- place of its token hash. The first banner owns the ban, unless the operator bans again. Answers the owner.
-- An app player's ban (not a repeated one) emits player.banned to the player's outbox, with the change.
--! include emit_event
if redis.call('EXISTS', KEYS.player) == 0 or redis.call('EXISTS', KEYS.tombstone) == 1 then
  return RESULT.MISSING
end
local was = redis.call('HEXISTS', KEYS.player, 'banned_ms')
if ARGV.by_operator == '1' or was == 0 then
  redis.call('HSET', KEYS.player, 'banned_by', ARGV.actor)
end
redis.call('HSET', KEYS.player, 'banned_ms', ARGV.at_ms)
redis.call('SET', KEYS.auth, ARGV.mark, 'KEEPTTL')
local app = redis.call('HGET', KEYS.player, 'app_id')
if was == 0 and app then
  local external = redis.call('HGET', KEYS.player, 'external_id') or ''
  local data = cjson.encode({player_id = ARGV.player, external_id = external, banned = true, reason = ARGV.reason ~= '' and ARGV.reason or cjson.null})
  emit_event(KEYS.outbox, 'player.banned', app, ARGV.player, ARGV.at_ms, data)
end
return redis.call('HGET', KEYS.player, 'banned_by') or 'operator'
