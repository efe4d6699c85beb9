-- Stores a new game (see GameStore.create): only with the player's current token, within the player's games
-- limit, its cap on unfinished games and (for a daily challenge) its one attempt; a game of that id already stored
-- (a retried create) answers its kept response.
--! include gcra
--! include list_game
if redis.call('GET', KEYS.auth) ~= ARGV.token then return {RESULT.UNAUTHORIZED, ''} end
if redis.call('EXISTS', KEYS.state) == 1 then
  return {RESULT.KEPT, redis.call('GET', KEYS.idempotency) or ''}
end
if ARGV.attempt_ttl_ms ~= '' and redis.call('EXISTS', KEYS.attempt) == 1 then return {RESULT.ATTEMPTED, ''} end
if tonumber(ARGV.max_unfinished) > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS.open, '-inf', '(' .. ARGV.expired_before_ms)
  if redis.call('ZCARD', KEYS.open) >= tonumber(ARGV.max_unfinished) then return {RESULT.TOO_MANY_UNFINISHED, ''} end
end
local wait = gcra(KEYS.limit, tonumber(ARGV.interval), tonumber(ARGV.burst))
if wait > 0 then return {RESULT.LIMITED, wait} end
if ARGV.attempt_ttl_ms ~= '' then redis.call('SET', KEYS.attempt, ARGV.game, 'PX', ARGV.attempt_ttl_ms) end
redis.call('SET', KEYS.state, ARGV.state, 'PX', ARGV.ttl_ms)
if ARGV.response ~= '' then redis.call('SET', KEYS.idempotency, ARGV.response .. ARGV.state, 'PX', ARGV.kept_ms) end
list_game(KEYS.all, {KEYS.open, KEYS.won, KEYS.abandoned}, ARGV.game, ARGV.created_ms, 1)
return {RESULT.OK, ''}
