-- Emits challenge.entry ('left') for an app player whose entry just left a challenge's board (included after the
-- removal): `forget` drops the ids noted for its events too (the entry is gone for good).
local function board_left(player, at, forget)
  local ids = redis.call('HGET', KEYS.event_ids, player)
  if not ids then return end
  if forget then redis.call('HDEL', KEYS.event_ids, player) end
  local known = cjson.decode(ids)
  local data = cjson.encode({challenge = known.challenge, player_id = player, external_id = known.external_id,
    change = 'left', entry = cjson.null})
  emit_event(KEYS.outbox, 'challenge.entry', known.app, player, at, data)
end
