-- A banned player's erasure: its binding (if it still names it, else CONFLICT) keeps only the ban, and the erased
-- ban is noted under the player id's hash so that its unban finds the binding.
if redis.call('GET', KEYS.binding) ~= ARGV.player then return RESULT.CONFLICT end
redis.call('SET', KEYS.binding, ARGV.banned)
redis.call('SET', KEYS.note, ARGV.digest)
return RESULT.OK
