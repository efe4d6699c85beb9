-- The body of the save scripts (game_save, game_finish), as a function: see game_save.lua.
-- A game's keyed requests leave their digest's first SEEN_CHARS characters in its 'seen' string for CONST.KEPT_MS
-- after its last keyed change: a retry whose answer is no longer kept (older than the newest CONST.KEPT) is refused
-- with RESULT.EXPIRED, never applied twice. 16 bytes a keyed operation, at most max_game_operations of them a game.
local SEEN_CHARS = 16

local function seen_before(seen, digest)
  local all = redis.call('GET', seen)
  if not all then return false end
  local at = 1
  while true do
    local found = string.find(all, digest, at, true)
    if not found then return false end
    if (found - 1) % SEEN_CHARS == 0 then return true end
    at = found + 1
  end
end

local function save_game()
  if redis.call('GET', KEYS.auth) ~= ARGV.token then return {RESULT.UNAUTHORIZED, ''} end
  local current = redis.call('GET', KEYS.state)
  if not current then return {RESULT.MISSING, ''} end
  local tag = string.sub(KEYS.kept, 1, -5)  -- the game's keys: <tag>kept, <tag>idem:<digest>, <tag>seen
  local digest = ''
  if ARGV.response ~= '' then
    local kept = redis.call('GET', KEYS.idempotency)
    if kept then return {RESULT.KEPT, kept} end
    digest = string.sub(KEYS.idempotency, #tag + 6, #tag + 5 + SEEN_CHARS)
    if seen_before(tag .. 'seen', digest) then return {RESULT.EXPIRED, ''} end
  end
  if current ~= ARGV.basis then return {RESULT.CONFLICT, current} end
  if ARGV.notation ~= '' and CONST.LONGEST > 0 and redis.call('LLEN', KEYS.record) >= CONST.LONGEST then
    return {RESULT.TOO_LONG, ''}
  end
  local wait = gcra(KEYS.limit, CONST.INTERVAL, CONST.BURST)
  if wait > 0 then return {RESULT.LIMITED, wait} end
  local ttl = tonumber(ARGV.ttl_ms)
  if ARGV.pending_since ~= '' then redis.call('ZADD', KEYS.pending, ARGV.pending_since, ARGV.game) end
  if ARGV.notation ~= '' then redis.call('RPUSH', KEYS.record, ARGV.notation) end
  if ARGV.result ~= '' then redis.call('SET', KEYS.result, ARGV.result, 'NX') end
  if ttl > 0 then
    redis.call('SET', KEYS.state, ARGV.state, 'PX', ttl)
    redis.call('PEXPIRE', KEYS.record, ttl)
    redis.call('PEXPIRE', KEYS.result, ttl)
    redis.call('PEXPIRE', KEYS.hints, ttl)
  else
    redis.call('SET', KEYS.state, ARGV.state)
    redis.call('PERSIST', KEYS.record)
    redis.call('PERSIST', KEYS.result)
    redis.call('PERSIST', KEYS.hints)
  end
  local grew = 0
  if ARGV.response ~= '' then
    redis.call('SET', KEYS.idempotency, ARGV.response .. ARGV.state, 'PX', CONST.KEPT_MS)
    redis.call('APPEND', tag .. 'seen', digest)
    redis.call('PEXPIRE', tag .. 'seen', CONST.KEPT_MS)
    local prefix = tag .. 'idem:'
    if redis.call('LLEN', KEYS.kept) < CONST.KEPT then grew = 1 end
    redis.call('LPUSH', KEYS.kept, string.sub(KEYS.idempotency, #prefix + 1))
    for _, old in ipairs(redis.call('LRANGE', KEYS.kept, CONST.KEPT, -1)) do redis.call('DEL', prefix .. old) end
    redis.call('LTRIM', KEYS.kept, 0, CONST.KEPT - 1)
    redis.call('PEXPIRE', KEYS.kept, CONST.KEPT_MS)
  end
  redis.call('PUBLISH', KEYS.state, '')  -- the game's live streams: one per process reads it
  list_game(KEYS.all, {KEYS.open, KEYS.won, KEYS.abandoned}, ARGV.game, ARGV.changed_ms, ARGV.listed)
  return {RESULT.OK, tonumber(redis.call('GET', KEYS.hints) or '0'), grew}
end
