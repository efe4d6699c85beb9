-- Starts a player's statistics afresh, at once: counters, games, wins and pending settlements go together.
--! include follow_player
if redis.call('EXISTS', KEYS.tombstone) == 1 then return RESULT.ERASED end
redis.call('DEL', KEYS.counters, KEYS.games, KEYS.wins, KEYS.win, KEYS.pending)
redis.call('HSET', KEYS.counters, 'since_ms', ARGV.since_ms)
follow_player(KEYS.player, {KEYS.counters})
return RESULT.OK
