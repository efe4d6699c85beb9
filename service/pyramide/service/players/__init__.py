"""Players' routes: the HTTP edge of the one route prefix ``/v1/players`` (the caller's player, token, statistics,
wins, games and data export), served from one package so that a prefix has one home.

It owns no data and no service: its controllers compose the accounts, stats, games and deals domains' services,
through their public names and schemas, and sit above all of them; only ``app.py`` registers them."""
