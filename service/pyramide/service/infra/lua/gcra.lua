-- A generic cell rate algorithm (included): counts one request against the limit kept in `key` (an emission
-- interval and a burst, in ms) and answers 0, or the ms to wait (then nothing is counted). Redis's clock. On success
-- a second value: how far ahead of now the cell now stands (ms), what tells the remaining burst and the reset time.
local function gcra(key, interval, burst)
  if interval <= 0 then return 0 end
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local tat = tonumber(redis.call('GET', key) or '0')
  if tat < now then tat = now end
  local new = tat + interval
  local wait = new - burst - now
  if wait > 0 then return wait end
  redis.call('SET', key, new, 'PX', new - now)
  return 0, new - now
end
