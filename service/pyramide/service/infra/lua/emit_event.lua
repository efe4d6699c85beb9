-- Appends an event to an outbox stream in the calling script's own slot (included), so that a change and the event
-- it causes are written together or not at all. The caller then marks the outbox due in `pyr:{events}:due` (another
-- slot; see events/outbox.py): should its process die before that, the outbox sweep finds the stream.
-- `app` is the app whose endpoints may receive it ('*': every app), `player` the player it concerns ('' for none),
-- `at` the ms since the epoch when the change was made, `data` the payload (a JSON object).
local function emit_event(outbox, kind, app, player, at, data)
  return redis.call('XADD', outbox, '*', 'type', kind, 'app', app, 'player', player, 'at', at, 'data', data)
end
