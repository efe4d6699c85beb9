-- Lifts a ban, when the caller may (the operator any ban, an app only its own): OK; UNCHANGED when the player was
-- not banned; MISSING when there is no such player; FORBIDDEN when it is not the caller's ban to lift.
-- Lifting an app player's ban emits player.banned (banned false) to the player's outbox, with the change.
--! include emit_event
if redis.call('EXISTS', KEYS.player) == 0 then return RESULT.MISSING end
local was = redis.call('HEXISTS', KEYS.player, 'banned_ms')
if was == 1 and ARGV.by_operator ~= '1' and redis.call('HGET', KEYS.player, 'banned_by') ~= ARGV.actor then
  return RESULT.FORBIDDEN
end
redis.call('HDEL', KEYS.player, 'banned_ms', 'banned_by')
local hash = redis.call('HGET', KEYS.player, 'token_hash')
if hash then redis.call('SET', KEYS.auth, hash, 'KEEPTTL') end
if was == 0 then return RESULT.UNCHANGED end
local app = redis.call('HGET', KEYS.player, 'app_id')
if app then
  local external = redis.call('HGET', KEYS.player, 'external_id') or ''
  local data = cjson.encode({player_id = ARGV.player, external_id = external, banned = false, reason = ARGV.reason ~= '' and ARGV.reason or cjson.null})
  emit_event(KEYS.outbox, 'player.banned', app, ARGV.player, ARGV.at_ms, data)
end
return RESULT.OK
