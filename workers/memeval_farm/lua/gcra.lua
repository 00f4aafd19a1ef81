-- GCRA admission for one limiter key, atomic across every worker on every machine.
-- KEYS[1]  the key holding the theoretical arrival time (TAT), in microseconds
-- ARGV[1]  emission interval in microseconds (period / count)
-- ARGV[2]  burst: how many requests may pass back to back
-- Returns {allowed (1|0), wait_us, now_us}. Redis' clock is the only clock used, so the
-- workers' own clocks may drift without letting more through.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tau = interval * (tonumber(ARGV[2]) - 1)
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then
  tat = now
end
local allow_at = tat - tau
if allow_at > now then
  return {0, allow_at - now, now}
end
local new_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX',
  math.ceil((new_tat - now) / 1000) + 1000)
return {1, 0, now}
