-- A banned player's erasure: its binding (if it still names it, else CONFLICT) keeps only the ban, and the erased
-- ban is noted under the player id's hash so that its unban finds the binding; player.erased goes to the app's
-- outbox with it (once: a second erasure finds the binding changed).
--! include emit_event
if redis.call('GET', KEYS.binding) ~= ARGV.player then return RESULT.CONFLICT end
redis.call('SET', KEYS.binding, ARGV.banned)
redis.call('SET', KEYS.note, ARGV.digest)
local t = redis.call('TIME')
emit_event(KEYS.outbox, 'player.erased', ARGV.app, ARGV.player, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV.data)
return RESULT.OK
