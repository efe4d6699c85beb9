-- One more hint in a game, unless its player is being erased (the tombstone); it expires with the game.
if redis.call('EXISTS', KEYS.tombstone) == 1 then return RESULT.ERASED end
redis.call('INCR', KEYS.hints)
redis.call('PEXPIRE', KEYS.hints, ARGV.ttl_ms)
return RESULT.OK
