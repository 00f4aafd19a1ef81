-- Return what is left of case fund ARGV[1] to every budget scope: its case has ended (done,
-- skipped, crashed or cancelled), and nothing more will be drawn from it.
-- KEYS     six per scope: the first four of budget_reserve.lua (unused here, so the key layout
--          matches the Budget's), then the funds hash and the fund leases zset
-- Releasing twice is a no-op. Returns the micro-USD released (from the first scope).
local function add(hash, field, by)
  redis.call('HINCRBY', hash, field, string.format('%d', by))
end

local released = -1
local scopes = #KEYS / 6
for i = 0, scopes - 1 do
  local state, funds, leases = KEYS[6*i+1], KEYS[6*i+5], KEYS[6*i+6]
  local left = tonumber(redis.call('HGET', funds, ARGV[1]))
  if left then
    add(state, 'funded', -left)
    redis.call('HDEL', funds, ARGV[1])
  end
  redis.call('ZREM', leases, ARGV[1])
  if released < 0 then
    released = left or 0
  end
end
return released
