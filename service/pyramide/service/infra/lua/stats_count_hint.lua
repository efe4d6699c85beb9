-- One more hint in the player's counters, unless the player is being erased.
--! include follow_player
if redis.call('EXISTS', KEYS.tombstone) == 1 then return RESULT.ERASED end
redis.call('HINCRBY', KEYS.counters, 'hints', 1)
follow_player(KEYS.player, {KEYS.counters})
return RESULT.OK
