-- Appends an event to an outbox stream in the calling script's own slot (included), so that a change and the event
-- it causes are written together or not at all. The caller then marks the outbox due in `pyr:{events}:due` (another
-- slot; see events/outbox.py): should its process die before that, the outbox sweep finds the stream.
-- `app` is the app whose endpoints may receive it ('*': every app), `player` the player it concerns ('' for none),
-- `at` the ms since the epoch when the change was made, `data` the payload (a JSON object). `us` is Redis's clock in
-- microseconds as the entry is written: an outbox deleted once empty (outbox_settle.lua) and written again after
-- Redis's clock stepped back may give an entry an id an earlier entry had; the event id covers `us` too, so the new
-- event is not taken for the old one (by the delivery log, nor by a receiver dropping repeats).
local function emit_event(outbox, kind, app, player, at, data)
  local clock = redis.call('TIME')
  local us = clock[1] .. string.format('%06d', tonumber(clock[2]))
  return redis.call('XADD', outbox, '*', 'type', kind, 'app', app, 'player', player, 'at', at, 'data', data, 'us', us)
end
