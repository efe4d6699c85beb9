-- Gives back a live stream's lease in one cap (the stream ended), whether or not it still holds one.
redis.call('ZREM', KEYS.leases, ARGV.stream)
return RESULT.OK
