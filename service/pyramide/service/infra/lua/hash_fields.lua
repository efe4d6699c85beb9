-- A JSON object of text fields as the flat list HSET takes (included).
local function hash_fields(json)
  local flat = {}
  for field, value in pairs(cjson.decode(json)) do
    flat[#flat + 1] = field
    flat[#flat + 1] = value
  end
  return flat
end
