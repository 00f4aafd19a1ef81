-- GCRA reservation for one limiter key: the caller is given the next free slot, now or later,
-- and the slot is taken for it at once, so callers queue instead of all waking for one slot.
-- KEYS[1]  the key holding the theoretical arrival time (TAT), in microseconds
-- KEYS[2]  the key's pause count: each 429 pause adds one (gcra_pause.lua)
-- ARGV[1]  emission interval in microseconds (period / count)
-- ARGV[2]  burst: how many requests may pass back to back
-- Returns {wait_us, now_us, pauses}: the slot is at now + wait, on Redis' clock.
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
local new_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX',
  math.ceil((new_tat - now) / 1000) + 1000)
return {wait, now, tonumber(redis.call('GET', KEYS[2])) or 0}
