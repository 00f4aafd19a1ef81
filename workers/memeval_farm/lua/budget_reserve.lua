-- Hold up to ARGV[2] micro-USD, and at least ARGV[6], against every budget scope at once, or
-- against none.
-- KEYS     six per scope: state hash, holds hash (id -> amount), leases zset (id -> deadline),
--          lapsed hash (id -> amount; holds whose worker vanished), queue zset (id -> first
--          wait), seen hash (id -> last poll)
-- ARGV[1]  hold id, the same on every poll; ARGV[2] amount (integer micro-USD);
--          ARGV[3] lease (us); ARGV[4] key TTL (s); ARGV[5] a waiter silent this long (us) left;
--          ARGV[6] the smallest hold the caller can use (its call then asks for fewer tokens)
-- While the settled spend leaves room for the full amount, only the full amount is held
-- (waiting for in-flight holds to settle if need be); once it does not, the tail of the budget
-- is handed out whole to one caller at a time, as long as it covers the smallest hold.
-- Returns {1, held} held; {0, i} wait: scope i's in-flight holds fill the room (settling them
-- may free it), or its first call has not settled yet, or an older caller is waiting first;
-- {-1, i} refused: scope i is closed, or its settled spend leaves less than the smallest hold
-- with nothing in flight, which closes it so that no later, smaller call sneaks in.
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
local scopes = #KEYS / 6
local function key(i, k) return KEYS[6*i+k] end

local function leave_queues()
  for i = 0, scopes - 1 do
    redis.call('ZREM', key(i, 5), id)
    redis.call('HDEL', key(i, 6), id)
  end
end

-- A hold whose lease ran out is counted as spent in full: its call may have been billed.
for i = 0, scopes - 1 do
  local state, holds, leases, lapsed = key(i, 1), key(i, 2), key(i, 3), key(i, 4)
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
end

local wait = -1
local grant = amount
for i = 0, scopes - 1 do
  local state = key(i, 1)
  local v = redis.call('HMGET', state, 'cap', 'spent', 'reserved', 'closed', 'calls')
  if not v[1] then
    return redis.error_reply('budget ' .. state .. ' was never opened')
  end
  local cap, spent, reserved = tonumber(v[1]), tonumber(v[2] or 0), tonumber(v[3] or 0)
  if v[4] then
    leave_queues()
    return {-1, i}
  end
  local free = cap - spent - reserved
  if spent + least > cap then
    if reserved <= 0 then
      redis.call('HSET', state, 'closed', 'exhausted', 'closed_at', t[1])
      leave_queues()
      return {-1, i}
    end
    if wait < 0 then  -- in-flight calls may settle cheaply, and teach the caller a smaller hold
      wait = i
    end
  else
    local need = amount
    if spent + amount > cap then
      need = least
      grant = math.min(grant, free)
    end
    if wait < 0 and free < need then
      wait = i
    end
  end
  -- Until one billed call has settled, one hold at a time: its bill shows whether holds bound
  -- this service at all, before a crowd of calls can each be billed past theirs.
  if wait < 0 and reserved > 0 and not v[5] then
    wait = i
  end
end

-- First come, first served: while an older caller waits for room, newcomers queue behind it,
-- so a large call is not starved by smaller ones from later cases.
for i = 0, scopes - 1 do
  local queue, seen = key(i, 5), key(i, 6)
  while true do
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
for i = 0, scopes - 1 do
  add(key(i, 1), 'reserved', grant)
  redis.call('HSET', key(i, 2), id, grant)
  redis.call('ZADD', key(i, 3), now + tonumber(ARGV[3]), id)
  for k = 1, 4 do
    redis.call('EXPIRE', key(i, k), ttl)
  end
end
return {1, grant}
