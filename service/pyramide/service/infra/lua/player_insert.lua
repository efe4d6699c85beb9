-- Stores a new player (its fields, a JSON object of text) and its token hash, both expiring when idle.
--! include hash_fields
redis.call('HSET', KEYS.player, unpack(hash_fields(ARGV.fields)))
redis.call('PEXPIRE', KEYS.player, ARGV.idle_ms)
redis.call('SET', KEYS.auth, ARGV.token_hash, 'PX', ARGV.idle_ms)
return RESULT.OK
