-- Binds the new player only if the binding still holds what the request saw (ARGV.seen, empty for none); answers
-- the player bound now.
local bound = redis.call('GET', KEYS.binding)
if (bound or '') ~= ARGV.seen then return bound end
redis.call('SET', KEYS.binding, ARGV.player)
return ARGV.player
