-- Hold up to ARGV[2] micro-USD, and at least ARGV[6], against every budget scope at once, or
-- against none: for one paid call, or for a whole case's calls (its fund).
-- KEYS     eight per scope: state hash, holds hash (id -> amount), leases zset (id -> deadline),
--          lapsed hash (id -> amount; holds whose worker vanished), queue zset (id -> first
--          wait), seen hash (id -> last poll), funds hash (case fund id -> what is left of it),
--          fund leases zset (id -> deadline)
-- ARGV[1]  hold id, the same on every poll; ARGV[2] amount (integer micro-USD);
--          ARGV[3] lease (us); ARGV[4] key TTL (s); ARGV[5] a waiter silent this long (us) left;
--          ARGV[6] the smallest hold the caller can use (its call then asks for fewer tokens);
--          ARGV[7] 'fund' to hold a case's fund, else a call's hold; ARGV[8] the fund a call
--          draws on first ('' for none): what is left of it counts as room for that call only
-- While the settled spend leaves room for the full amount, only the full amount is held
-- (waiting for in-flight holds to settle if need be); once it does not, the tail of the budget
-- is handed out whole to one caller at a time, as long as it covers the smallest hold.
-- Funds are money promised to started cases: no other caller may take it, and a fund's unused
-- part returns to the budget when its case ends (`budget_unfund.lua`) or its lease runs out (its
-- worker vanished; nothing was sent from it, so it is released, not counted as spent).
-- Returns {1, held} held; {0, i} wait: scope i's in-flight holds or funds fill the room
-- (settling them may free it), or its first call has not settled yet, or an older caller is
-- waiting first; {-1, i} refused: scope i is closed, or its settled spend leaves less than the
-- smallest hold with nothing in flight, which closes it so that no later, smaller call sneaks in
-- (a case's fund larger than the whole cap closes nothing: it says nothing of the others).
redis.replicate_commands()
-- Every increment goes through `add`: Lua writes a negated zero (a free call's hold) as "-0",
-- which HINCRBY refuses as "not an integer", so a free model failed every case.
local function add(hash, field, by)
  redis.call('HINCRBY', hash, field, string.format('%d', by))
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local id, amount, ttl = ARGV[1], tonumber(ARGV[2]), ARGV[4]
local least = math.min(tonumber(ARGV[6] or ARGV[2]), amount)
local stale = now - tonumber(ARGV[5])
local is_fund = ARGV[7] == 'fund'
local source = ARGV[8] or ''
local scopes = #KEYS / 8
local function key(i, k) return KEYS[8*i+k] end

local function leave_queues()
  for i = 0, scopes - 1 do
    redis.call('ZREM', key(i, 5), id)
    redis.call('HDEL', key(i, 6), id)
  end
end

for i = 0, scopes - 1 do
  local state, holds, leases, lapsed = key(i, 1), key(i, 2), key(i, 3), key(i, 4)
  -- A hold whose lease ran out is counted as spent in full: its call may have been billed.
  for _, hid in ipairs(redis.call('ZRANGEBYSCORE', leases, '-inf', now)) do
    local held = tonumber(redis.call('HGET', holds, hid))
    if held then
      add(state, 'reserved', -held)
      add(state, 'spent', held)
      redis.call('HSET', lapsed, hid, held)
      redis.call('HDEL', holds, hid)
    end
    redis.call('ZREM', leases, hid)
  end
  -- A fund whose lease ran out is released: no call was ever sent from what is left of it.
  local funds, fund_leases = key(i, 7), key(i, 8)
  for _, fid in ipairs(redis.call('ZRANGEBYSCORE', fund_leases, '-inf', now)) do
    local left = tonumber(redis.call('HGET', funds, fid))
    if left then
      add(state, 'funded', -left)
      redis.call('HDEL', funds, fid)
    end
    redis.call('ZREM', fund_leases, fid)
  end
end

-- What is left of the caller's own fund: the same in every scope, as every draw takes from all.
-- A started case may finish even once the budget closed for want of money for new cases.
local own, funded = 0, source ~= ''
if source ~= '' then
  for i = 0, scopes - 1 do
    local left = tonumber(redis.call('HGET', key(i, 7), source))
    funded = funded and left ~= nil
    if i == 0 or (left or 0) < own then
      own = left or 0
    end
  end
end

local wait = -1
local grant = amount
for i = 0, scopes - 1 do
  local state = key(i, 1)
  local v = redis.call('HMGET', state, 'cap', 'spent', 'reserved', 'closed', 'calls', 'funded')
  if not v[1] then
    return redis.error_reply('budget ' .. state .. ' was never opened')
  end
  local cap, spent, reserved = tonumber(v[1]), tonumber(v[2] or 0), tonumber(v[3] or 0)
  local others = tonumber(v[6] or 0) - own  -- funds of other cases: promised, not free
  if v[4] and not (funded and v[4] == 'exhausted') then
    leave_queues()
    return {-1, i}
  end
  local committed = spent + others
  local free = cap - committed - reserved
  if committed + least > cap then
    if reserved <= 0 and others <= 0 then
      leave_queues()
      if is_fund and least > cap then  -- no budget this size could hold the case
        return {-1, i}
      end
      redis.call('HSET', state, 'closed', 'exhausted', 'closed_at', t[1])
      return {-1, i}
    end
    if wait < 0 then  -- in-flight calls may settle cheaply, and cases return unused funds
      wait = i
    end
  else
    local need = amount
    if committed + amount > cap then
      need = least
      grant = math.min(grant, free)
    end
    if wait < 0 and free < need then
      wait = i
    end
  end
  -- Until one billed call has settled, one hold at a time: its bill shows whether holds bound
  -- this service at all, before a crowd of calls can each be billed past theirs. A fund sends
  -- nothing, so it does not wait for that.
  if wait < 0 and not is_fund and reserved > 0 and not v[5] then
    wait = i
  end
end

-- First come, first served: while an older caller waits for room, newcomers queue behind it,
-- so a large call is not starved by smaller ones from later cases. A call drawing on its
-- case's fund goes first: finishing a started case is what makes its spend count.
for i = 0, scopes - 1 do
  local queue, seen = key(i, 5), key(i, 6)
  while source == '' do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head or head == id then
      break
    end
    if (tonumber(redis.call('HGET', seen, head)) or 0) >= stale then
      if wait < 0 then
        wait = i
      end
      break
    end
    redis.call('ZREM', queue, head)
    redis.call('HDEL', seen, head)
  end
end

if wait >= 0 then
  for i = 0, scopes - 1 do
    redis.call('ZADD', key(i, 5), 'NX', now, id)
    redis.call('HSET', key(i, 6), id, now)
    redis.call('EXPIRE', key(i, 5), ttl)
    redis.call('EXPIRE', key(i, 6), ttl)
  end
  return {0, wait}
end

leave_queues()
local deadline = now + tonumber(ARGV[3])
local drawn = math.min(grant, own)
for i = 0, scopes - 1 do
  local state = key(i, 1)
  if is_fund then
    add(state, 'funded', grant)
    redis.call('HSET', key(i, 7), id, grant)
    redis.call('ZADD', key(i, 8), deadline, id)
  else
    add(state, 'reserved', grant)
    redis.call('HSET', key(i, 2), id, grant)
    redis.call('ZADD', key(i, 3), deadline, id)
    if source ~= '' and redis.call('HEXISTS', key(i, 7), source) == 1 then
      add(state, 'funded', -drawn)
      redis.call('HINCRBY', key(i, 7), source, string.format('%d', -drawn))
      redis.call('ZADD', key(i, 8), deadline, source)  -- a case still drawing is alive
    end
  end
  for k = 1, 8 do
    redis.call('EXPIRE', key(i, k), ttl)
  end
end
return {1, grant}
