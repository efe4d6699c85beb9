-- Lifts a ban, when the caller may (the operator any ban, an app only its own): OK; UNCHANGED when the player was
-- not banned; MISSING when there is no such player; FORBIDDEN when it is not the caller's ban to lift.
if redis.call('EXISTS', KEYS.player) == 0 then return RESULT.MISSING end
local was = redis.call('HEXISTS', KEYS.player, 'banned_ms')
if was == 1 and ARGV.by_operator ~= '1' and redis.call('HGET', KEYS.player, 'banned_by') ~= ARGV.actor then
  return RESULT.FORBIDDEN
end
redis.call('HDEL', KEYS.player, 'banned_ms', 'banned_by')
local hash = redis.call('HGET', KEYS.player, 'token_hash')
if hash then redis.call('SET', KEYS.auth, hash, 'KEEPTTL') end
if was == 1 then return RESULT.OK end
return RESULT.UNCHANGED
