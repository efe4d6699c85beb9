-- Registers a webhook endpoint in its app's hash, unless the app has CONST.MAX already (see events/store.py).
if redis.call('HLEN', KEYS.webhooks) >= CONST.MAX then return RESULT.FULL end
redis.call('HSET', KEYS.webhooks, ARGV.id, ARGV.endpoint)
return RESULT.OK
