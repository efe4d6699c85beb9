-- Deletes a binding if it still names the player.
if redis.call('GET', KEYS.binding) == ARGV.player then redis.call('DEL', KEYS.binding) end
return RESULT.OK
