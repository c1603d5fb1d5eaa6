// askd's URLs from the one base URL a caller gives. Paths are joined
// relative to the base, so an askd served under a prefix
// (https://tools.example.com/askd/) works as one at the root.

/** The base with a trailing slash on its path, so relative joins keep a prefix. */
export function baseUrl(url: string): URL {
  const base = new URL(url);
  if (!base.pathname.endsWith('/')) base.pathname += '/';
  base.search = '';
  base.hash = '';
  return base;
}

/** The WebSocket URL: a ws(s):// URL as given, or `<base>ws` with the scheme swapped. */
export function wsUrl(url: string): URL {
  const given = new URL(url);
  if (given.protocol === 'ws:' || given.protocol === 'wss:') return given;
  const ws = new URL('ws', baseUrl(url));
  ws.protocol = ws.protocol === 'https:' ? 'wss:' : 'ws:';
  return ws;
}

/** One path segment: ids may hold `/`, spaces or `?`. */
export const seg = encodeURIComponent;

export type TokenSource = string | (() => string | Promise<string>);

export async function resolveToken(token: TokenSource): Promise<string> {
  return typeof token === 'function' ? await token() : token;
}
