-- Holds a win for review: OK; UNCHANGED when it is held already; FULL when its challenge holds ARGV.per_challenge
-- reviews and every one is still pending (otherwise the oldest decided one makes room).
if redis.call('HEXISTS', KEYS.items, ARGV.review) == 1 then return RESULT.UNCHANGED end
if redis.call('ZCARD', KEYS.challenge) >= tonumber(ARGV.per_challenge) then
  local room = false
  for _, old in ipairs(redis.call('ZRANGE', KEYS.challenge, 0, -1)) do
    local member = redis.call('HGET', KEYS.order, old)
    if not member or string.sub(member, 1, 1) == '1' then
      if member then redis.call('ZREM', KEYS.queue, member) end
      redis.call('HDEL', KEYS.items, old)
      redis.call('HDEL', KEYS.order, old)
      redis.call('ZREM', KEYS.challenge, old)
      room = true
      break
    end
  end
  if not room then return RESULT.FULL end
end
redis.call('ZADD', KEYS.queue, 0, ARGV.member)
redis.call('HSET', KEYS.items, ARGV.review, ARGV.item)
redis.call('HSET', KEYS.order, ARGV.review, ARGV.member)
redis.call('ZADD', KEYS.challenge, ARGV.held_ms, ARGV.review)
return RESULT.OK
