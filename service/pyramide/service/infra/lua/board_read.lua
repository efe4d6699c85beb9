-- The player's member and entry on a board, read together (nil when the player has none there).
local member = redis.call('HGET', KEYS.best, ARGV.player)
if not member then return false end
return {member, redis.call('HGET', KEYS.entries, ARGV.player) or '{}'}
