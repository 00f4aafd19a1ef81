-- GCRA for one limiter key, atomic across every worker on every machine.
-- KEYS[1]  the key holding the theoretical arrival time (TAT), in microseconds
-- KEYS[2]  the key's pause count: each 429 pause adds one (gcra_pause.lua)
-- ARGV[1]  emission interval in microseconds (period / count)
-- ARGV[2]  burst: how many requests may pass back to back
-- ARGV[3]  'try': admit only if a slot is free now; 'reserve': take the next free slot, now
--          or later, so that callers queue instead of all waking for each slot that frees
-- Returns {admitted (1|0), wait_us, now_us, pauses}: a reserved slot is at now + wait, and a
-- caller that waits for it checks the pause count again before using it. Redis' clock is the
-- only clock used, so the workers' own clocks may drift without letting more through.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tau = interval * (tonumber(ARGV[2]) - 1)
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then
  tat = now
end
local wait = tat - tau - now
if wait < 0 then
  wait = 0
end
if wait > 0 and ARGV[3] == 'try' then
  return {0, wait, now, 0}
end
local new_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX',
  math.ceil((new_tat - now) / 1000) + 1000)
return {1, wait, now, tonumber(redis.call('GET', KEYS[2])) or 0}
