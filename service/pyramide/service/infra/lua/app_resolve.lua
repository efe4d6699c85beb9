-- The app's hash and the player bound to an external id, in one round trip (both in the app's slot).
return {redis.call('HGETALL', KEYS.app), redis.call('GET', KEYS.binding)}
