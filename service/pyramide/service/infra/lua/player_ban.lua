-- Bans a player that exists and is not being erased (else MISSING): the flag in its settings and the ban mark in
-- place of its token hash. The first banner owns the ban, unless the operator bans again. Answers the owner.
if redis.call('EXISTS', KEYS.player) == 0 or redis.call('EXISTS', KEYS.tombstone) == 1 then
  return RESULT.MISSING
end
if ARGV.by_operator == '1' or redis.call('HEXISTS', KEYS.player, 'banned_ms') == 0 then
  redis.call('HSET', KEYS.player, 'banned_by', ARGV.actor)
end
redis.call('HSET', KEYS.player, 'banned_ms', ARGV.at_ms)
redis.call('SET', KEYS.auth, ARGV.mark, 'KEEPTTL')
return redis.call('HGET', KEYS.player, 'banned_by') or 'operator'
