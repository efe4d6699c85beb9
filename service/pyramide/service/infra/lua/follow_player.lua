-- The player's keys live as long as the player (included): an idle player that never finished a game expires with
-- all it kept; one that did is kept for good. Applied to `keys` by every script that writes them.
local function follow_player(player, keys)
  local pttl = redis.call('PTTL', player)
  for _, key in ipairs(keys) do
    if pttl > 0 then redis.call('PEXPIRE', key, pttl) else redis.call('PERSIST', key) end
  end
end
