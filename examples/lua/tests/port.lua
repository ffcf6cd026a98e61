-- SPDX-License-Identifier: MIT
-- What a Lua port of perftramp could break, run by tests/clients/lua.sh under the
-- unpatched and the patched interpreter (PERFTRAMP unset and =all): the
-- output must be identical, and every assert must hold.  Each section
-- prints one line.
local out = {}
local function say(...) local t = table.pack(...); for i = 1, t.n do t[i] = tostring(t[i]) end; print(table.concat(t, " ")) end

-- coroutines: yields from deep inside nested Lua calls (longjmp out of
-- trampoline frames; the resumed frames are run again by unroll)
local function walk(n) if n == 0 then coroutine.yield("leaf") return 0 end return 1 + walk(n - 1) end
local co = coroutine.create(function(n) local r = walk(n); coroutine.yield(r); return "done" end)
say("coroutine", coroutine.resume(co, 50), coroutine.resume(co), coroutine.resume(co), coroutine.status(co))
local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i * i) end end)
say("wrap", gen(), gen(), gen())
local bad = coroutine.create(function() local function f() error("in coroutine") end f() end)
local ok, e = coroutine.resume(bad)
say("coroutine error", ok, e, coroutine.status(bad))
local cl = coroutine.create(function() local x <close> = setmetatable({}, {__close = function() out.closed = true end}); coroutine.yield(1) end)
coroutine.resume(cl)
say("coroutine.close", coroutine.close(cl), out.closed)
-- yield across pcall and a metamethod
local co2 = coroutine.wrap(function()
  local t = setmetatable({}, {__index = function(_, k) return coroutine.yield(k) end})
  local ok2, v = pcall(function() return t.key .. "!" end)
  return tostring(ok2) .. " " .. v
end)
say("yield in __index under pcall", co2(), co2("value"))

-- errors: longjmp through many trampoline frames, messages and tracebacks
local function thrower(n) if n == 0 then error({code = 42}) end return thrower(n - 1) + 1 end
local ok3, eobj = pcall(thrower, 200)
say("error object", ok3, type(eobj), eobj.code)
local function lvl(n) if n == 0 then error("deep", 2) end local r = lvl(n - 1); return r end
say("error level", pcall(lvl, 3))
local tb
xpcall(function() local function inner() error("tb") end inner() end, function(m) tb = debug.traceback(m, 1) end)
say("traceback has inner", tb:find("in local 'inner'") ~= nil, tb:find("in function <") ~= nil)
say("error in metamethod", pcall(function() return setmetatable({}, {__add = function() error("add!") end}) + 1 end))
local n = 0
for _ = 1, 1000 do n = n + (pcall(error, "x") and 0 or 1) end
say("1000 pcalls", n)

-- stack overflow: Lua's own error, caught, then Lua still runs
local function inf(k) return 1 + inf(k + 1) end
local ok4, e4 = pcall(inf, 1)
say("stack overflow", ok4, tostring(e4):match("stack overflow") ~= nil)
local function deep(k) if k == 0 then return 0 end return 1 + deep(k - 1) end
say("deep 190000", deep(190000))

-- tail calls: constant stack, and the hook sees them
local function tc(k) if k == 0 then return "tail" end return tc(k - 1) end
say("tail calls", tc(3000000))
local calls, tails = 0, 0
debug.sethook(function(ev) if ev == "call" then calls = calls + 1 elseif ev == "tail call" then tails = tails + 1 end end, "c")
local function h2(k) if k == 0 then return 0 end return h2(k - 1) end
local function h1() return h2(5) + 0 end
h1()
debug.sethook()
say("hooks calls/tails", calls, tails)
local lines = {}
debug.sethook(function(_, l) lines[#lines + 1] = l end, "l")
local function lined(a)
  local b = a + 1
  return b
end
lined(1)
debug.sethook()
say("line hook", #lines)
say("getinfo", debug.getinfo(1, "S").what, (function() return debug.getinfo(2, "l").currentline end)() > 0)

-- C calling Lua calling C calling Lua
say("gsub", (string.gsub("abc", "%w", function(c) return c:upper() .. (("x"):rep(1):gsub("x", function() return "." end)) end)))
local t = {}
for i = 1, 200 do t[i] = (i * 7919) % 211 end
table.sort(t, function(a, b) return a > b end)
say("sort", t[1], t[200])

-- varargs, to-be-closed variables, goto
local function va(...) local s = 0; for i = 1, select("#", ...) do s = s + select(i, ...) end return s, ... end
say("varargs", va(1, 2, 3, 4))
do
  local order = {}
  do
    local a <close> = setmetatable({}, {__close = function() order[#order + 1] = "a" end})
    local b <close> = setmetatable({}, {__close = function() order[#order + 1] = "b" end})
  end
  say("tbc", table.concat(order))
end
do local i = 0 ::top:: i = i + 1 if i < 10 then goto top end say("goto", i) end

-- GC of functions: many distinct Protos made, called and collected; their
-- finalizers run Lua code
local made = 0
for round = 1, 20 do
  for i = 1, 200 do
    local f = assert(load("local a = ... return function(b) return a + b + " .. i .. " end", "=gen" .. i))
    made = made + f(round)(1)
  end
  setmetatable({}, {__gc = function() made = made + 0 end})
  collectgarbage()
end
say("gc functions", made)
say("ok")
