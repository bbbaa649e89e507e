-- wrk script for the "varied" rows of `make bench`: every request carries its own values, so
-- no cached page or copy answers it twice (issue 19). bench/run.py passes, after `--`:
--   1 mode:  list | cursor | detail | history | mcp
--   2 base:  the fixed part of the query ("sort=name-asc"), or "-" for none
--   3 vary:  comma-separated parts drawn per request: minMrr, page, q, category, limit
--   4 pool:  a file of values, one per line (slugs, cursors, words, categories), or "-"
-- minMrr is drawn log-uniformly from 1 to 100,000, page uniformly from 1 to 200, limit from 5
-- to 25; q, category, slug and cursor uniformly from the pool.

local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("thread_number", counter)
end

local function lines(path)
  local values = {}
  if path == "-" then
    return values
  end
  for line in io.lines(path) do
    if line ~= "" then
      values[#values + 1] = line
    end
  end
  return values
end

function init(args)
  mode, base, pool_path = args[1], args[2], args[4]
  vary = {}
  for part in string.gmatch(args[3], "[^,]+") do
    vary[part] = true
  end
  pool = lines(pool_path)
  -- A different sequence per thread and per run.
  math.randomseed(os.time() * 1000 + (thread_number or 0) * 7919)
  path_base = wrk.path
end

local function pick()
  return pool[math.random(#pool)]
end

local function log_uniform(low, high)
  return math.floor(math.exp(math.log(low) + math.random() * (math.log(high) - math.log(low))))
end

function request()
  if mode == "mcp" then
    local body = string.format(
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_startups",'
        .. '"arguments":{"query":"%s","limit":%d}}}',
      pick(),
      math.random(5, 25)
    )
    return wrk.format("POST", path_base, nil, body)
  end
  if mode == "detail" then
    return wrk.format("GET", path_base .. pick())
  end
  if mode == "history" then
    return wrk.format("GET", path_base .. pick() .. "/history")
  end
  local query = {}
  if base ~= "-" then
    query[#query + 1] = base
  end
  if mode == "cursor" then
    query[#query + 1] = "cursor=" .. pick()
  end
  if vary.minMrr then
    query[#query + 1] = "minMrr=" .. log_uniform(1, 100000)
  end
  if vary.page then
    query[#query + 1] = "page=" .. math.random(1, 200)
  end
  if vary.q then
    query[#query + 1] = "q=" .. pick()
  end
  if vary.category then
    query[#query + 1] = "category=" .. pick()
  end
  if vary.limit then
    query[#query + 1] = "limit=" .. math.random(5, 25)
  end
  return wrk.format("GET", path_base .. "?" .. table.concat(query, "&"))
end
