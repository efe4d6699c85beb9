-- Keeps a game in its owner's lists (included): in `all`, and in the one of `lists` (open, won, abandoned) that
-- `kind` (1 to 3) names, out of the others, under the moment of its last change.
local function list_game(all, lists, game, now, kind)
  redis.call('ZADD', all, now, game)
  for i, key in ipairs(lists) do
    if i == tonumber(kind) then
      redis.call('ZADD', key, now, game)
    else
      redis.call('ZREM', key, game)
    end
  end
end
