-- A session only for a player that still exists (else MISSING) and is not banned (else UNAUTHORIZED; nothing
-- written): expired ones go, and the oldest while the player would have more than ARGV.most; the hash lives as long
-- as its newest session.
if redis.call('EXISTS', KEYS.player) == 0 then return RESULT.MISSING end
if redis.call('HEXISTS', KEYS.player, 'banned_ms') == 1 then return RESULT.UNAUTHORIZED end
local now, live = tonumber(ARGV.now_ms), {}
local flat = redis.call('HGETALL', KEYS.sessions)
for i = 1, #flat, 2 do
  local expires = tonumber(string.match(flat[i + 1], ' (%d+)$'))
  if expires <= now then redis.call('HDEL', KEYS.sessions, flat[i]) else live[#live + 1] = {expires, flat[i]} end
end
table.sort(live, function(a, b) return a[1] < b[1] end)
for i = 1, #live - tonumber(ARGV.most) + 1 do redis.call('HDEL', KEYS.sessions, live[i][2]) end
redis.call('HSET', KEYS.sessions, ARGV.session, ARGV.app .. ' ' .. ARGV.expires_ms)
redis.call('PEXPIREAT', KEYS.sessions, ARGV.expires_ms)
return RESULT.OK
