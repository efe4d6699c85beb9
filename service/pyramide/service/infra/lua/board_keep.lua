-- Keeps an entry with the player's ban (the better of two on one board), in the player's slot: OK; MISSING once the
-- player is no longer banned, so an entry is never kept away by a ban that was lifted meanwhile.
if redis.call('HEXISTS', KEYS.player, 'banned_ms') == 0 then return RESULT.MISSING end
local old = redis.call('HGET', KEYS.kept, ARGV.board)
if old and string.sub(old, 1, string.find(old, '\n', 1, true) - 1) <= ARGV.member then return RESULT.OK end
redis.call('HSET', KEYS.kept, ARGV.board, ARGV.member .. '\n' .. ARGV.entry)
return RESULT.OK
