"""The game service: a Litestar app over Redis. Handlers stay thin: load the game, apply the engine, save it."""
