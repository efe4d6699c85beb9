-- Emits a closed challenge's challenge.closed event to its outbox, to every app ('*'), once: only while its deal is
-- kept and its marker is not set yet (set in the same script): OK when emitted, UNCHANGED when it was already.
--! include emit_event
if redis.call('EXISTS', KEYS.deal) == 0 then return RESULT.MISSING end
if not redis.call('SET', KEYS.marker, ARGV.at_ms, 'NX') then return RESULT.UNCHANGED end
emit_event(KEYS.outbox, 'challenge.closed', '*', '', ARGV.at_ms, ARGV.data)
return RESULT.OK
