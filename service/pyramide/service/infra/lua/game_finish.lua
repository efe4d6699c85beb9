-- Saves a change that ends an app player's game (see GameStore.save) and, in the same script, appends its event to
-- the player's outbox (game.won, game.lost, game.abandoned), so the end and its event are written together or not
-- at all. The event's hints are the game's count as saved. Anonymous players' changes and unfinished games are saved
-- by game_save alone and pay nothing for events.
--! include gcra
--! include list_game
--! include emit_event
--! include save_game
local answer = save_game()
if answer[1] == RESULT.OK then
  local data = cjson.decode(ARGV.event_data)
  data.hints = answer[2]
  emit_event(KEYS.outbox, ARGV.event_type, ARGV.event_app, ARGV.event_player, ARGV.changed_ms, cjson.encode(data))
end
return answer
