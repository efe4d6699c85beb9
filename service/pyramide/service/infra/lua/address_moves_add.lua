-- Adds one process's count of an address's moves to the window's counter; answers the total.
local total = redis.call('INCRBY', KEYS.window, ARGV.moves)
redis.call('PEXPIRE', KEYS.window, ARGV.expire_ms)
return total
