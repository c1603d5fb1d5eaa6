-- askd's commit: one atomic step for a batch of changes, each checked
-- against the status Redis holds, each that took effect appended to the
-- stream every node follows.
--
-- KEYS: none (every key is in one hash slot, named from the prefix).
-- ARGV[1] the node, ARGV[2] the key prefix, ARGV[3] the stream's MAXLEN,
-- ARGV[4] each change's audit records and title (JSON: "records", one
-- array of record bodies as JSON text per change, askd/audit/records.py;
-- "titles", the question's title per change that asks one, else ""),
-- ARGV[5..] the changes as JSON (askd/store/redis/change_json.py).
-- Returns {flag per change (1 took effect, 0 did not), the stream id up to
-- which the caller must have applied the stream (its last entry, or when
-- none took effect the stream's newest), or ""}.
local node = ARGV[1]
local P = ARGV[2]  -- the key prefix (one hash slot)
local maxlen = ARGV[3]  -- the stream's MAXLEN (about)
local out = {}
local last = ''
local audit = cjson.decode(ARGV[4])

-- The history index (protocol section 19; askd/audit/history.py): a
-- question's audience and title while it is pending, then its end's seq at
-- the head of each of those users' lists, the last 100 kept, and its title
-- in audit:titles by that seq, counted in audit:titles:n by the lists that
-- hold it (gone with the last, or with the record: store/redis/audit.py).
local ENDS = {answered = true, declined = true, timeout = true, cancelled = true, withdrawn = true}
local TITLES, HELD = P .. 'audit:titles', P .. 'audit:titles:n'
local function history(seq, rec, title)
  local qk = P .. 'audit:aud:' .. rec.requestId .. ' ' .. rec.sessionId
  local tk = P .. 'audit:title:' .. rec.requestId .. ' ' .. rec.sessionId
  local users = (rec.event == 'asked' and rec.data.audience) or (rec.event == 'escalated' and rec.data.added)
  if type(users) == 'table' then
    for _, u in ipairs(users) do redis.call('SADD', qk, u) end
    if rec.event == 'asked' and title ~= '' then redis.call('SET', tk, title) end
  elseif ENDS[rec.event] then
    title = redis.call('GET', tk)
    if title then redis.call('HSET', TITLES, seq, title) end
    for _, u in ipairs(redis.call('SMEMBERS', qk)) do
      local hk = P .. 'audit:history:' .. u
      redis.call('LPUSH', hk, seq)
      if title then redis.call('HINCRBY', HELD, seq, 1) end
      local gone = redis.call('LINDEX', hk, 100)
      if gone and redis.call('HEXISTS', HELD, gone) == 1 and redis.call('HINCRBY', HELD, gone, -1) <= 0 then
        redis.call('HDEL', TITLES, gone)
        redis.call('HDEL', HELD, gone)
      end
      redis.call('LTRIM', hk, 0, 99)
    end
    if title and redis.call('HEXISTS', HELD, seq) == 0 then redis.call('HDEL', TITLES, seq) end
    redis.call('DEL', qk, tk)
  end
end
local function session(sid, owner, agent)
  local sk = P .. 's:' .. sid
  if redis.call('EXISTS', sk) == 0 then
    redis.call('HSET', sk, 'owner', owner, 'n', 0, 'kids', 0, 'seq', redis.call('INCR', P .. 'seq'))
    -- the sub of the agent token that first asked in it (none: a token without one)
    if agent then redis.call('HSET', sk, 'agent', agent) end
    redis.call('SADD', P .. 'sessions', sid)
  end
  return sk
end
-- An Idempotency-Key is per session and per agent sub (a key or a sub
-- holds no newline); a token without a sub keeps the name it always had.
local function keyname(sid, key, agent)
  local k = P .. 'k:' .. sid .. ':' .. key
  if agent then k = k .. '\n' .. agent end
  return k
end
-- An agent with a sub reaches only a session it first asked in (or a new one).
local function reaches(sid, agent)
  if not agent then return true end
  local sk = P .. 's:' .. sid
  return redis.call('EXISTS', sk) == 0 or redis.call('HGET', sk, 'agent') == agent
end
for i = 5, #ARGV do
  local c = cjson.decode(ARGV[i])
  local ok = 0
  local rk = P .. 'r:' .. (c.rid or '')
  if c.t == 'a' then
    local sk = P .. 's:' .. c.sid
    local owner = redis.call('HGET', sk, 'owner')
    local dup = c.key and redis.call('EXISTS', keyname(c.sid, c.key, c.agent)) == 1
    local apart = not reaches(c.sid, c.agent) or (c.parent and not reaches(c.parent, c.agent))
    if (not owner or owner == c.uid) and not dup and not apart and redis.call('EXISTS', rk) == 0 then
      session(c.sid, c.uid, c.agent)
      if c.parent and not redis.call('HGET', sk, 'parent') then
        session(c.parent, c.uid, c.agent)
        redis.call('HSET', sk, 'parent', c.parent)
        redis.call('HINCRBY', P .. 's:' .. c.parent, 'kids', 1)
      end
      redis.call('HINCRBY', sk, 'n', 1)
      local seq = redis.call('INCR', P .. 'seq')
      redis.call('HSET', rk, 'sid', c.sid, 'uid', c.uid, 'created', c.created, 'expires', c.expires,
        'frame', c.frame, 'status', 'pending', 'seq', seq, 'notified', 0)
      if c.agent then redis.call('HSET', rk, 'agent', c.agent) end
      if c.mext then redis.call('HSET', rk, 'mext', c.mext) end
      if c.otm then redis.call('HSET', rk, 'otm', c.otm) end
      if c.esc then redis.call('HSET', rk, 'esc', c.esc, 'escalations', 0) end
      if c.rmd then redis.call('HSET', rk, 'rmd', c.rmd) end
      -- the SHA-256 of the ask's hostKey: only its own host may relay (protocol section 5)
      if c.hk then redis.call('HSET', rk, 'hk', c.hk) end
      -- an action to approve: its record (JSON) and its count of approvals
      if c.appr then redis.call('HSET', rk, 'appr', c.appr, 'apn', 0) end
      if c.key then
        redis.call('HSET', rk, 'key', c.key)
        redis.call('SET', keyname(c.sid, c.key, c.agent), c.rid)
      end
      redis.call('SADD', P .. 'requests', c.rid)
      ok = 1
    end
  elseif c.t == 'e' then
    -- an action's last approval only against the count it was decided with
    -- (compared as numbers); any other end while pending
    if redis.call('HGET', rk, 'status') == 'pending'
        and (c.counted == nil or tonumber(redis.call('HGET', rk, 'apn') or '0') == tonumber(c.counted)) then
      redis.call('HSET', rk, 'status', c.status, 'ended', c.ended)
      redis.call('HDEL', rk, 'frame', 'otm')
      if c.answers then redis.call('HSET', rk, 'answers', c.answers) end
      if c.error then redis.call('HSET', rk, 'error', c.error) end
      -- who answered or declined, how, why; a timeout that took its default
      if c.by then redis.call('HSET', rk, 'by', c.by) end
      if c.via then redis.call('HSET', rk, 'via', c.via) end
      if c.reason then redis.call('HSET', rk, 'reason', c.reason) end
      if c.dflt then redis.call('HSET', rk, 'dflt', 1) end
      if c.dg then redis.call('HSET', rk, 'dg', c.dg) end  -- the receipt's digest (protocol section 16)
      if c.obo then redis.call('HSET', rk, 'obo', c.obo) end  -- the away user a delegate answered for
      if c.counted ~= nil then redis.call('HSET', rk, 'appr', c.appr, 'apn', tonumber(c.counted) + 1) end
      ok = 1
    end
  elseif c.t == 'x' then
    -- an extension: compare and set, from the deadline it was decided against
    -- (as numbers: 1800000060 and 1800000060.0 are one deadline)
    if redis.call('HGET', rk, 'status') == 'pending'
        and tonumber(redis.call('HGET', rk, 'expires')) == tonumber(c.prev) then
      redis.call('HSET', rk, 'expires', c.expires, 'ext', c.ext, 'frame', c.frame)
      ok = 1
    end
  elseif c.t == 'v' then
    -- an approval short of the quorum: compare and set on the count of
    -- approvals it was decided against (as numbers)
    if redis.call('HGET', rk, 'status') == 'pending'
        and tonumber(redis.call('HGET', rk, 'apn') or '0') == tonumber(c.counted) then
      redis.call('HSET', rk, 'appr', c.appr, 'apn', tonumber(c.counted) + 1)
      ok = 1
    end
  elseif c.t == 's' then
    -- an escalation step: once, while pending and not yet taken
    if redis.call('HGET', rk, 'status') == 'pending'
        and tonumber(redis.call('HGET', rk, 'escalations') or '0') < c.step then
      redis.call('HSET', rk, 'escalations', c.step)
      ok = 1
    end
  elseif c.t == 'g' then
    -- a group's members (a JSON list, kept as sent), replacing any before
    redis.call('HSET', P .. 'groups', c.g, c.members)
    ok = 1
  elseif c.t == 'gd' then
    ok = redis.call('HDEL', P .. 'groups', c.g)
  elseif c.t == 'w' then
    -- a user's away (protocol section 20): its end and delegates (a JSON list), replacing any before
    redis.call('HSET', P .. 'away:until', c.u, c.at)
    redis.call('HSET', P .. 'away:to', c.u, c.to)
    ok = 1
  elseif c.t == 'wd' then
    -- an away ends only if held; its deadline's only at its until (as numbers)
    local held = redis.call('HGET', P .. 'away:until', c.u)
    if held and (c.at == nil or tonumber(held) == tonumber(c.at)) then
      redis.call('HDEL', P .. 'away:until', c.u)
      redis.call('HDEL', P .. 'away:to', c.u)
      ok = 1
    end
  elseif c.t == 'n' then
    if redis.call('HGET', rk, 'status') == 'pending' then
      redis.call('HSET', rk, 'notified', 1)
      ok = 1
    end
  elseif c.t == 'f' then
    local status = redis.call('HGET', rk, 'status')
    if status and status ~= 'pending' then
      local key = redis.call('HGET', rk, 'key')
      if key then redis.call('DEL', keyname(c.sid, key, redis.call('HGET', rk, 'agent'))) end
      redis.call('DEL', rk)
      redis.call('SREM', P .. 'requests', c.rid)
      local sid = c.sid
      redis.call('HINCRBY', P .. 's:' .. sid, 'n', -1)
      -- forget sessions that hold nothing, walking up, as the registry does
      while sid do
        local sk = P .. 's:' .. sid
        if tonumber(redis.call('HGET', sk, 'n') or '0') > 0 or tonumber(redis.call('HGET', sk, 'kids') or '0') > 0 then
          break
        end
        local parent = redis.call('HGET', sk, 'parent')
        redis.call('DEL', sk)
        redis.call('SREM', P .. 'sessions', sid)
        if parent then redis.call('HINCRBY', P .. 's:' .. parent, 'kids', -1) end
        sid = parent
      end
      ok = 1
    end
  end
  if ok == 1 then
    last = redis.call('XADD', P .. 'events', 'MAXLEN', '~', maxlen, '*', 'c', ARGV[i])
    -- its audit records, in the same step: the next seqs of the one chain
    -- (sealed in seq order when read: Lua has no SHA-256; store/redis/audit.py)
    for _, body in ipairs(audit.records[i - 4]) do
      local seq = redis.call('INCR', P .. 'audit:seq')
      redis.call('RPUSH', P .. 'audit', seq .. ' ' .. body)
      history(seq, cjson.decode(body), audit.titles[i - 4])
    end
  end
  out[#out + 1] = ok
end
if last == '' then
  -- Nothing took effect: another node decided first. The caller waits
  -- until it has applied the stream up to here, then decides again.
  local top = redis.call('XREVRANGE', P .. 'events', '+', '-', 'COUNT', 1)
  if top[1] then last = top[1][1] end
end
out[#out + 1] = last
return out
