-- Deletes a binding if it still names the player, and then emits player.erased to the app's outbox (once: a second
-- erasure finds the binding gone). `at` is Redis's clock.
--! include emit_event
if redis.call('GET', KEYS.binding) == ARGV.player then
  redis.call('DEL', KEYS.binding)
  local t = redis.call('TIME')
  emit_event(KEYS.outbox, 'player.erased', ARGV.app, ARGV.player, tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV.data)
end
return RESULT.OK
