-- Notes a review among the player's, unless the player is being erased (then nothing is held).
if redis.call('EXISTS', KEYS.tombstone) == 1 then return RESULT.ERASED end
redis.call('SADD', KEYS.reviews, ARGV.entry)
return RESULT.OK
