-- Replace hold ARGV[1] by what the call really cost, ARGV[2] micro-USD, in every scope.
-- KEYS     five per scope: the first four of budget_reserve.lua, then the samples list (the
--          completion tokens of recent settled calls, from which holds learn their size)
-- ARGV[3]  '1' when a call was made (settle), '0' when it failed unbilled (release);
-- ARGV[4]  the call's completion tokens, '' when unknown; ARGV[5] how many samples to keep;
-- ARGV[6]  key TTL (s)
-- A hold already lapsed was counted as spent in full; it is corrected to the true cost.
-- A cost above the hold means the holds are no bound on this service: the scope is closed, so
-- no further call can carry the spend past the cap, and the excess is counted for the report.
-- Settling twice is a no-op, so a retried settle cannot double-count.
-- Returns {found (1|0), micro-USD billed above the hold}.
-- Every increment goes through `add`: Lua writes a negated zero (a free call's hold) as "-0",
-- which HINCRBY refuses as "not an integer", so a free model failed every case.
local function add(hash, field, by)
  redis.call('HINCRBY', hash, field, string.format('%d', by))
end

local id, actual, counted = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local scopes = #KEYS / 5
local found, over = 0, 0
for i = 0, scopes - 1 do
  local state, holds, leases, lapsed = KEYS[5*i+1], KEYS[5*i+2], KEYS[5*i+3], KEYS[5*i+4]
  local samples = KEYS[5*i+5]
  local hit = false
  local held = tonumber(redis.call('HGET', holds, id))
  if held then
    add(state, 'reserved', -held)
    add(state, 'spent', actual)
    redis.call('HDEL', holds, id)
    redis.call('ZREM', leases, id)
    hit = true
  else
    held = tonumber(redis.call('HGET', lapsed, id))
    if held then
      add(state, 'spent', actual - held)
      redis.call('HDEL', lapsed, id)
      hit = true
    end
  end
  if hit then
    found = 1
  end
  if hit and counted then
    add(state, 'calls', 1)
    if actual > held then
      over = actual - held
      add(state, 'overbilled', over)
      add(state, 'overbilled_calls', 1)
      redis.call('HSETNX', state, 'closed', 'overbilled')
    end
    if ARGV[4] ~= '' then
      redis.call('RPUSH', samples, ARGV[4])
      redis.call('LTRIM', samples, -tonumber(ARGV[5]), -1)
      redis.call('EXPIRE', samples, ARGV[6])
    end
  end
end
return {found, over}
