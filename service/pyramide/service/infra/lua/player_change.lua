-- Changes fields (a JSON object of text) of a player that still exists (else MISSING): a change racing the
-- player's erasure or expiry must not bring back a hash, without a time to live, that names the erased player.
--! include hash_fields
if redis.call('EXISTS', KEYS.player) == 0 then return RESULT.MISSING end
redis.call('HSET', KEYS.player, unpack(hash_fields(ARGV.fields)))
return RESULT.OK
