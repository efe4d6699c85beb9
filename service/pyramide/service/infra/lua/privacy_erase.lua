-- An erasure's first step: settings and token hash go, the tombstone is set, and the boards noted and Redis's clock
-- are answered. It begins with a deletion: past maxmemory, Redis refuses a script's first write only when that
-- write could grow memory, so the tombstone is written even when Redis is full.
redis.call('DEL', KEYS.player, KEYS.auth)
local boards = redis.call('SMEMBERS', KEYS.boards)
redis.call('SET', KEYS.tombstone, '1', 'PX', ARGV.guard_ms)
local t = redis.call('TIME')
return {boards, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}
