-- Replace hold ARGV[1] by what the call really cost, ARGV[2] micro-USD, in every scope.
-- KEYS     four per scope: the first four of budget_reserve.lua
-- ARGV[3]  '1' when a call was made (settle), '0' when it failed unbilled (release)
-- A hold already lapsed was counted as spent in full; it is corrected to the true cost.
-- Settling twice is a no-op, so a retried settle cannot double-count.
local id, actual, counted = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local scopes = #KEYS / 4
local found = 0
for i = 0, scopes - 1 do
  local state, holds, leases, lapsed = KEYS[4*i+1], KEYS[4*i+2], KEYS[4*i+3], KEYS[4*i+4]
  local hit = false
  local held = tonumber(redis.call('HGET', holds, id))
  if held then
    redis.call('HINCRBY', state, 'reserved', -held)
    redis.call('HINCRBY', state, 'spent', actual)
    redis.call('HDEL', holds, id)
    redis.call('ZREM', leases, id)
    hit = true
  else
    held = tonumber(redis.call('HGET', lapsed, id))
    if held then
      redis.call('HINCRBY', state, 'spent', actual - held)
      redis.call('HDEL', lapsed, id)
      hit = true
    end
  end
  if hit then
    found = 1
  end
  if hit and counted then
    redis.call('HINCRBY', state, 'calls', 1)
  end
end
return found
