// A person's history (askd 1.3, protocol section 19): `GET /v1/me/history`
// with the inbox's user token. One request, no retry: a page shows its
// failure and offers to load again.

import { AskdError, AskdUnavailable } from './errors.js';
import type { HistoryBody } from './protocol.js';
import { resolveToken, type TokenSource } from './urls.js';

/** The history URL next to a `/ws` URL (`wss://h/askd/ws` -> `https://h/askd/v1/me/history`). */
export function historyUrl(ws: URL): URL {
  const http = new URL(ws);
  http.protocol = http.protocol === 'wss:' ? 'https:' : 'http:';
  http.search = '';
  http.hash = '';
  return new URL('v1/me/history', http);
}

/**
 * The questions that ended with the user in their audience, newest first
 * (the last 100). Rejects with AskdError when askd refuses (401, 403, or
 * an askd that keeps no trail) and AskdUnavailable when it cannot be reached.
 */
export async function fetchHistory(ws: URL, token: TokenSource, f: typeof fetch = globalThis.fetch): Promise<HistoryBody> {
  const url = historyUrl(ws);
  let response: Response;
  try {
    response = await f(url, { headers: { Authorization: `Bearer ${await resolveToken(token)}` }, cache: 'no-store' });
  } catch (err) {
    throw new AskdUnavailable(url.href, err instanceof Error ? err.message : String(err));
  }
  if (response.ok) return (await response.json()) as HistoryBody;
  let code = response.status === 401 ? 'unauthorized' : response.status === 403 ? 'forbidden' : 'http_error';
  let message = response.statusText || `HTTP ${response.status}`;
  let details;
  try {
    ({ code, message, details } = (await response.json()).error);
  } catch {
    // not askd's envelope (a proxy's page): keep the status line
  }
  throw new AskdError(code, message, response.status, details);
}
