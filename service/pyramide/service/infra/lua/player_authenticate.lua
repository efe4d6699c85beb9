-- The player's hash, its idle time renewed with every key that follows the player; keeps the token hash where the
-- game scripts compare it. A player kept for good (it finished a game) keeps its audit list for good too.
--! include follow_player
local fields = redis.call('HGETALL', KEYS.player)
local hash = redis.call('HGET', KEYS.player, 'token_hash')
if hash and redis.call('EXISTS', KEYS.auth) == 0 then redis.call('SET', KEYS.auth, hash) end
if #fields > 0 and redis.call('PTTL', KEYS.player) > 0 then
  redis.call('PEXPIRE', KEYS.player, ARGV.idle_ms)
  follow_player(KEYS.player, {
    KEYS.player, KEYS.counters, KEYS.games, KEYS.wins, KEYS.win, KEYS.pending, KEYS.audit, KEYS.auth
  })
elseif #fields > 0 and redis.call('PTTL', KEYS.audit) > 0 then
  redis.call('PERSIST', KEYS.audit)
end
return fields
