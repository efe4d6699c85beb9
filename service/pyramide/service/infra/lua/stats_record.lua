-- Moves a game that counts forward (start, won, lost) and updates the player's counters in the same step; a game
-- already won or lost is not moved again, so recording twice counts once. The game leaves the pending settlements.
--! include follow_player
if redis.call('EXISTS', KEYS.tombstone) == 1 then return RESULT.ERASED end
local function record()
  redis.call('ZREM', KEYS.pending, ARGV.game)
  local state = redis.call('HGET', KEYS.games, ARGV.game)
  if state == 'won' or state == 'lost' then return RESULT.UNCHANGED end
  if ARGV.outcome == 'start' then
    if state then return RESULT.UNCHANGED end
    redis.call('HSET', KEYS.games, ARGV.game, 'playing')
    return RESULT.OK
  end
  redis.call('HSET', KEYS.games, ARGV.game, ARGV.outcome)
  if ARGV.outcome == 'lost' then
    redis.call('HINCRBY', KEYS.counters, 'lost', 1)
    redis.call('HSET', KEYS.counters, 'current_streak', 0)
    return RESULT.OK
  end
  local elapsed, moves = tonumber(ARGV.elapsed_ms), tonumber(ARGV.moves)
  redis.call('HINCRBY', KEYS.counters, 'won', 1)
  redis.call('HINCRBY', KEYS.counters, 'won_time_ms', elapsed)
  redis.call('HINCRBY', KEYS.counters, 'won_moves', moves)
  local streak = redis.call('HINCRBY', KEYS.counters, 'current_streak', 1)
  if streak > tonumber(redis.call('HGET', KEYS.counters, 'best_streak') or '0') then
    redis.call('HSET', KEYS.counters, 'best_streak', streak)
  end
  local best = redis.call('HGET', KEYS.counters, 'best_time_ms')
  if not best or elapsed < tonumber(best) then redis.call('HSET', KEYS.counters, 'best_time_ms', elapsed) end
  local fewest = redis.call('HGET', KEYS.counters, 'fewest_moves')
  if not fewest or moves < tonumber(fewest) then redis.call('HSET', KEYS.counters, 'fewest_moves', moves) end
  -- the win's par is looked up later (it is often not known yet): kept as 'par:<game>' = '<code> <moves> <from ms>',
  -- at most ARGV.par_max of them, until a statistics read folds it into par_hits and best_over_par
  if ARGV.par_deal ~= '' and tonumber(redis.call('HGET', KEYS.counters, 'par_due') or '0') < tonumber(ARGV.par_max) then
    redis.call('HSET', KEYS.counters, 'par:' .. ARGV.game, ARGV.par_deal .. ' ' .. moves .. ' ' .. ARGV.par_from)
    redis.call('HINCRBY', KEYS.counters, 'par_due', 1)
  end
  redis.call('ZADD', KEYS.wins, 0, ARGV.member)
  redis.call('HSET', KEYS.win, ARGV.game, ARGV.entry)
  return RESULT.OK
end
local recorded = record()
if ARGV.outcome ~= 'start' then redis.call('PERSIST', KEYS.player) end
follow_player(KEYS.player, {KEYS.counters, KEYS.games, KEYS.wins, KEYS.win, KEYS.pending})
if ARGV.outcome == 'won' and redis.call('HEXISTS', KEYS.player, 'banned_ms') == 1 then return RESULT.BANNED end
return recorded
