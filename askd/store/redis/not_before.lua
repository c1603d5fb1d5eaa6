-- Keep the later revocation instant (askd token revoke-all): two nodes
-- revoking at once never move it back.
-- KEYS[1]: the not_before key. ARGV[1]: the instant (seconds since the epoch).
local was = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > was then
  redis.call('SET', KEYS[1], ARGV[1])
end
return 0
