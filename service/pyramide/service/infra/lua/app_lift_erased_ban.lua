-- Lifts an erased player's ban (if the note still names the binding, else CONFLICT): the binding goes (the user
-- gets a fresh player next time) and so does the note.
if redis.call('GET', KEYS.note) ~= ARGV.digest then return RESULT.CONFLICT end
if redis.call('GET', KEYS.binding) == ARGV.banned then redis.call('DEL', KEYS.binding) end
redis.call('DEL', KEYS.note)
return RESULT.OK
