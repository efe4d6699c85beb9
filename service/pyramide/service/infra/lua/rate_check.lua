-- Counts one request against a rate limit: answers 0, or the ms to wait.
--! include gcra
return gcra(KEYS.cell, tonumber(ARGV.interval), tonumber(ARGV.burst))
