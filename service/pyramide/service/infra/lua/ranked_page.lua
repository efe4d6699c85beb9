-- A page of a ranked list after the member `after` ('' for the first page): the first entry's rank, up to
-- `limit` + 1 members (one more tells there is a next page) and their details.
local start = '-'
if ARGV.after ~= '' then start = '(' .. ARGV.after end
local members = redis.call('ZRANGEBYLEX', KEYS.ranking, start, '+', 'LIMIT', 0, tonumber(ARGV.limit) + 1)
local rank = 0
if #members > 0 then rank = redis.call('ZLEXCOUNT', KEYS.ranking, '-', '(' .. members[1]) + 1 end
local details = {}
for i, member in ipairs(members) do details[i] = redis.call('HGET', KEYS.details, string.sub(member, -36)) or '{}' end
return {rank, members, details}
