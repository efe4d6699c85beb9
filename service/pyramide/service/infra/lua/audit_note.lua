-- Notes an action in the player's audit list while the player exists and is not being erased (else {MISSING}),
-- keeping the latest ARGV.most, with the player's time to live; answers {OK, the entries pushed out}.
--! include follow_player
if redis.call('EXISTS', KEYS.player) == 0 or redis.call('EXISTS', KEYS.tombstone) == 1 then
  return {RESULT.MISSING}
end
redis.call('LPUSH', KEYS.audit, ARGV.entry)
local over = redis.call('LRANGE', KEYS.audit, tonumber(ARGV.most), -1)
redis.call('LTRIM', KEYS.audit, 0, tonumber(ARGV.most) - 1)
follow_player(KEYS.player, {KEYS.audit})
return {RESULT.OK, unpack(over)}
