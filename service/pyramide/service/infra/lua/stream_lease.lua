-- Takes or renews a live stream's lease in one cap (a sorted set: stream id by the ms its lease ends). Leases that
-- ended (a killed process's streams, no longer renewed by their heartbeat) are dropped first; a new stream past
-- ARGV.cap is FULL; a stream that holds a lease is renewed whatever the count.
redis.call('ZREMRANGEBYSCORE', KEYS.leases, '-inf', ARGV.now_ms)
if not redis.call('ZSCORE', KEYS.leases, ARGV.stream) and redis.call('ZCARD', KEYS.leases) >= tonumber(ARGV.cap) then
  return RESULT.FULL
end
redis.call('ZADD', KEYS.leases, ARGV.until_ms, ARGV.stream)
redis.call('PEXPIREAT', KEYS.leases, ARGV.until_ms)
return RESULT.OK
