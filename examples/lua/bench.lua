local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
-- lua bench.lua [N [ROUNDS]]: fib(N) ROUNDS times (the recursive benchmark
-- of tests/clients/lua.sh and `make bench`); prints the last result
local n, rounds = tonumber(arg[1]) or 24, tonumber(arg[2]) or 40
local r
for _ = 1, rounds do r = fib(n) end
print(r)
