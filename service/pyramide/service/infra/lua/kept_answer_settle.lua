-- Settles an Idempotency-Key's claim (http/kept_answers.py), only while the claim is still the caller's (its owner
-- token): keeps the sealed answer for ARGV.ttl_ms, or frees the key when ARGV.answer is empty. 1: done; 0: the claim
-- was no longer the caller's (its lease ran out and another request took the key), nothing written.
if redis.call('GET', KEYS.slot) ~= ARGV.owner then return 0 end
if ARGV.answer == '' then
  redis.call('DEL', KEYS.slot)
else
  redis.call('SET', KEYS.slot, ARGV.answer, 'PX', ARGV.ttl_ms)
end
return 1
