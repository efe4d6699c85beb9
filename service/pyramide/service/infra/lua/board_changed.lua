-- Grows a board's change counter (the id of its live streams' events, a number that only grows) and tells its
-- streams (included). A counter not there yet starts from Redis's clock in ms, so that one set by board_touch.lua for
-- a board nobody had entered, and since expired, is never counted again from below. `keep`: an entry changed, the
-- counter is kept for good; else (board_touch.lua) it expires after `ttl_s` unless it is already kept for good.
local function board_changed(changes, channel, keep, ttl_s)
  local id
  if redis.call('EXISTS', changes) == 0 then
    local clock = redis.call('TIME')
    id = clock[1] .. string.format('%03d', math.floor(tonumber(clock[2]) / 1000))
    redis.call('SET', changes, id)
    if not keep then redis.call('EXPIRE', changes, ttl_s) end
  else
    id = redis.call('INCR', changes)
    if keep then
      redis.call('PERSIST', changes)
    elseif redis.call('TTL', changes) > 0 then
      redis.call('EXPIRE', changes, ttl_s)
    end
  end
  redis.call('PUBLISH', channel, id)
end
