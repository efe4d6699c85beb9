-- Ends one delivery pass over an outbox (see infra/outbox.py): writes the endpoints' cursors (ARGV.cursors, a JSON
-- object: endpoint id -> its cursor's JSON), drops those of endpoints gone (ARGV.gone, a JSON array) and the entries
-- every endpoint is past (ARGV.finished, a JSON array of entry ids). Nothing is written to an outbox that is gone (an
-- erased player's, deleted while its delivery was in flight): its cursors go too. An outbox left empty is deleted
-- with its cursors, in this script, so an event added meanwhile is either seen here (the outbox stays) or creates
-- the outbox afresh; unless its last entry was added in this very ms, as one added next could then get that entry's
-- id again in the new stream (and so its event id): it is kept, and deleted at a later pass.
-- Answers {RESULT.MISSING, 0, 0} for an outbox gone, else {RESULT.OK, the entries it holds, 1 if it was deleted}.
if redis.call('EXISTS', KEYS.outbox) == 0 then
  redis.call('DEL', KEYS.cursors)
  return {RESULT.MISSING, 0, 0}
end
local cursors = {}
for endpoint, cursor in pairs(cjson.decode(ARGV.cursors)) do
  cursors[#cursors + 1] = endpoint
  cursors[#cursors + 1] = cursor
end
if #cursors > 0 then redis.call('HSET', KEYS.cursors, unpack(cursors)) end
local gone = cjson.decode(ARGV.gone)
if #gone > 0 then redis.call('HDEL', KEYS.cursors, unpack(gone)) end
local finished = cjson.decode(ARGV.finished)
if #finished > 0 then redis.call('XDEL', KEYS.outbox, unpack(finished)) end
local left = redis.call('XLEN', KEYS.outbox)
if left > 0 then return {RESULT.OK, left, 0} end
local info = redis.call('XINFO', 'STREAM', KEYS.outbox)
local last = '0-0'
for i = 1, #info, 2 do
  if info[i] == 'last-generated-id' then last = info[i + 1] end
end
local now = redis.call('TIME')
if tonumber(string.match(last, '^(%d+)')) >= tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) then
  return {RESULT.OK, 0, 0}
end
redis.call('DEL', KEYS.outbox, KEYS.cursors)
return {RESULT.OK, 0, 1}
