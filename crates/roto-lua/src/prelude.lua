-- The Lua half of a setup script's environment: the `aws` table, `aws.with`, the `roto`
-- helpers written in Lua, and the runner that turns any error into one message.
-- The Rust primitives follow one convention: they return `true, results...` or
-- `false, problem`, and the wrappers here raise the problem at the script's own line.
local invoke, check_service, check_operation, caller, sleep, clock, roto = ...
local error, pcall, pairs, setmetatable, rawset, tostring, type =
  error, pcall, pairs, setmetatable, rawset, tostring, type
local format, pack, unpack, min = string.format, table.pack, table.unpack, math.min

-- Raises `problem` at the line of the script that called the caller of `lifted`.
local function lift(name, f)
  return function(...)
    local r = pack(f(...))
    if r[1] then
      return unpack(r, 2, r.n)
    end
    error(name .. ": " .. r[2], 2)
  end
end

local function lift_all(t, prefix)
  for name, f in pairs(t) do
    if type(f) == "function" then
      t[name] = lift(prefix .. name, f)
    elseif type(f) == "table" then
      lift_all(f, prefix .. name .. ".")
    end
  end
end
lift_all(roto, "roto.")

-- Account and region of the calls in the current `aws.with` block.
local scope = {}

-- Checks `{account = ..., region = ...}`; raises at the caller of the caller.
local function options(opts, what)
  if opts == nil then
    return {}
  end
  if type(opts) ~= "table" then
    error(format('%s: options are a table like {account = "111111111111", region = "eu-west-1"}, got a %s',
      what, type(opts)), 3)
  end
  for key, value in pairs(opts) do
    if key == "account" then
      if type(value) ~= "string" or not value:match("^%d%d%d%d%d%d%d%d%d%d%d%d$") then
        error(format("%s: account must be a string of 12 digits, got %s", what, tostring(value)), 3)
      end
    elseif key == "region" then
      if type(value) ~= "string" or value == "" then
        error(format("%s: region must be a non-empty string, got %s", what, tostring(value)), 3)
      end
    else
      error(format("%s: unknown option '%s' (options: account, region)", what, tostring(key)), 3)
    end
  end
  return opts
end

local aws_error = {
  __tostring = function(e)
    return format("%s:%d: aws.%s.%s failed with AWS error %s: %s",
      e.script, e.line, e.service, e.operation, e.code, e.message)
  end,
}

local function operation(service, name)
  local what = "aws." .. service .. "." .. name
  return function(input, opts)
    opts = options(opts, what)
    local ok, r = invoke(service, name, input, opts.account or scope.account, opts.region or scope.region)
    if ok then
      return r
    end
    if type(r) == "table" then
      r.script, r.line = caller()
      error(setmetatable(r, aws_error), 0)
    end
    error(what .. ": " .. r, 2)
  end
end

local function service(name)
  return setmetatable({}, {
    __index = function(t, op)
      local problem = check_operation(name, op)
      if problem then
        error(problem, 2)
      end
      local f = operation(name, op)
      rawset(t, op, f)
      return f
    end,
  })
end

local function with(opts)
  opts = options(opts, "aws.with")
  return function(fn)
    if type(fn) ~= "function" then
      error('aws.with{...} takes a function: aws.with{region = "eu-west-1"}(function() ... end)', 2)
    end
    local saved = scope
    scope = { account = opts.account or saved.account, region = opts.region or saved.region }
    local r = pack(pcall(fn))
    scope = saved
    if not r[1] then
      error(r[2], 0)
    end
    return unpack(r, 2, r.n)
  end
end

local aws = setmetatable({ with = with }, {
  __index = function(t, name)
    local problem = check_service(name)
    if problem then
      error(problem, 2)
    end
    local s = service(name)
    rawset(t, name, s)
    return s
  end,
})

function roto.wait_for(fn, timeout)
  if type(fn) ~= "function" then
    error("roto.wait_for: the first argument is a function returning a true value when done", 2)
  end
  timeout = timeout or 10
  if type(timeout) ~= "number" or timeout <= 0 then
    error("roto.wait_for: the timeout is a positive number of seconds, got " .. tostring(timeout), 2)
  end
  local deadline = clock() + timeout
  -- Deliveries usually land within a millisecond or two: look again soon, then back off
  -- to every 10 ms.
  local pause = 0.001
  while true do
    local v = fn()
    if v then
      return v
    end
    if clock() >= deadline then
      error(format("roto.wait_for: the condition was still false after %g seconds", timeout), 2)
    end
    sleep(pause)
    pause = min(pause * 2, 0.01)
  end
end

-- Runs the script; returns nothing on success, else the error as a string (AWS errors
-- through their __tostring) or as the raw Rust error.
local function run(chunk)
  local ok, err = pcall(chunk)
  if ok then
    return nil
  end
  if type(err) == "table" then
    return tostring(err)
  end
  return err
end

return aws, run
