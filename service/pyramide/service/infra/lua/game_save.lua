-- Saves a changed game (see GameStore.save): only with the player's current token, over exactly the state it was
-- changed from, within the player's moves limit and the record's longest; with its record entry, the response kept
-- for its Idempotency-Key (the newest CONST.KEPT per game), its result and its pending settlement.
--! include gcra
--! include list_game
--! include save_game
return save_game()
