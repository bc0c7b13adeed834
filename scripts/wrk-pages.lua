-- Asks PAGES different pages in turn: PAGE_PATH with %d replaced by 1 to
-- PAGES (scripts/rest-vs-nginx.sh, PAGES=N). Headers given with -H go
-- with every request.
local pages = tonumber(os.getenv("PAGES"))
local path = os.getenv("PAGE_PATH")
local i = 0

request = function()
  i = i % pages + 1
  return wrk.format(nil, string.format(path, i))
end
