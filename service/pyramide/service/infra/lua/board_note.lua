-- Notes a board among the player's, unless the player is being erased (then the win is entered nowhere).
if redis.call('EXISTS', KEYS.tombstone) == 1 then return RESULT.ERASED end
redis.call('SADD', KEYS.boards, ARGV.board)
return RESULT.OK
