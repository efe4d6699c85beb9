-- Folds one win's par into the player's counters, once: the kept 'par:<game>' field goes in the same step, so a
-- second fold of the same win (a concurrent statistics read) finds nothing and changes nothing. ARGV.par is the
-- deal's par, or '' when the deal has none (lost, or not decided within the budget): the win then never counts.
if redis.call('EXISTS', KEYS.tombstone) == 1 then return RESULT.ERASED end
local field = 'par:' .. ARGV.game
local due = redis.call('HGET', KEYS.counters, field)
if not due then return RESULT.UNCHANGED end
redis.call('HDEL', KEYS.counters, field)
redis.call('HINCRBY', KEYS.counters, 'par_due', -1)
if ARGV.par ~= '' then
  local over = tonumber(string.match(due, '^%S+ (%d+)')) - tonumber(ARGV.par)
  if over == 0 then redis.call('HINCRBY', KEYS.counters, 'par_hits', 1) end
  local best = redis.call('HGET', KEYS.counters, 'best_over_par')
  if not best or over < tonumber(best) then redis.call('HSET', KEYS.counters, 'best_over_par', over) end
end
return RESULT.OK
