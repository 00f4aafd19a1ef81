-- A 429 from the service: nobody sharing this key may pass for ARGV[1] microseconds.
-- KEYS[1]  the limiter key; ARGV[2] emission interval (us); ARGV[3] burst.
-- KEYS[2]  the key's pause count, which callers holding a reserved slot read again before
--          they use it (gcra.lua): a slot taken before this pause is taken again.
-- Pushes the TAT so that the next admission is at now + pause, and the burst starts empty;
-- an earlier, longer pause is never shortened.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local pause = tonumber(ARGV[1])
local tau = tonumber(ARGV[2]) * (tonumber(ARGV[3]) - 1)
local target = now + pause + tau
local tat = tonumber(redis.call('GET', KEYS[1])) or now
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], 86400000)
if tat < target then
  redis.call('SET', KEYS[1], string.format('%d', target), 'PX',
    math.ceil((target - now) / 1000) + 1000)
  return target - tau - now
end
return tat - tau - now
