-- Replaces the token's hash only if it is still the one the request authenticated with (else CONFLICT): of two
-- rotations at once, one wins. Keeps the sealed answer of the latest rotation only (`rotate_record`).
if redis.call('GET', KEYS.auth) ~= ARGV.old_hash then return RESULT.CONFLICT end
redis.call('SET', KEYS.auth, ARGV.new_hash, 'KEEPTTL')
redis.call('HSET', KEYS.player, 'token_hash', ARGV.new_hash)
if ARGV.record ~= '' then
  local previous = redis.call('HGET', KEYS.player, 'rotate_record')
  if previous and previous ~= KEYS.sealed then redis.call('DEL', previous) end
  redis.call('SET', KEYS.sealed, ARGV.record, 'PX', ARGV.kept_ms)
  redis.call('HSET', KEYS.player, 'rotate_record', KEYS.sealed)
end
return RESULT.OK
