-- One more hint in a game, unless its player is being erased (the tombstone) or a hint was already counted for this
-- very version of the game (asking again on the same position is one hint, not two: UNCHANGED). Both keys expire
-- with the game.
if redis.call('EXISTS', KEYS.tombstone) == 1 then return RESULT.ERASED end
if redis.call('GET', KEYS.hinted) == ARGV.version then return RESULT.UNCHANGED end
redis.call('SET', KEYS.hinted, ARGV.version, 'PX', ARGV.ttl_ms)
redis.call('INCR', KEYS.hints)
redis.call('PEXPIRE', KEYS.hints, ARGV.ttl_ms)
return RESULT.OK
