-- Counts one request against a rate limit: answers {0, ms the cell stands ahead of now}, or {the ms to wait, 0}.
--! include gcra
local wait, ahead = gcra(KEYS.cell, tonumber(ARGV.interval), tonumber(ARGV.burst))
return {wait, ahead or 0}
