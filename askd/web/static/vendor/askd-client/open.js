// The browser's way in: `askd open --user YOU` prints a link to the page
// with a one-time code in its fragment (`#code=...`), never a token. The
// code is exchanged once for a user token (`POST v1/open`); askd's own
// inbox page and any page built on this client take it the same way.
import { AskdError, AskdUnavailable } from './errors.js';
/**
 * Exchange `askd open`'s one-time code for a user token. A code is good
 * once and for about 60 seconds; a used, expired or forged one is an
 * `AskdError` (`unauthorized`, status 401), an askd that cannot be reached
 * an `AskdUnavailable`. Nothing is retried: a code may be spent by a
 * request whose answer was lost, and only a new link helps then.
 */
export async function redeemCode(url, code, { fetch: f, signal } = {}) {
    const base = new URL(url);
    if (!base.pathname.endsWith('/'))
        base.pathname += '/';
    const target = new URL('v1/open', base);
    let response;
    try {
        response = await (f ?? globalThis.fetch.bind(globalThis))(target, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: JSON.stringify({ code }),
            cache: 'no-store',
            signal,
        });
    }
    catch (err) {
        if (signal?.aborted)
            throw signal.reason;
        throw new AskdUnavailable(target.href, err instanceof Error ? err.message : String(err));
    }
    let body = null;
    try {
        body = await response.json();
    }
    catch {
        // not askd's envelope (a proxy's page): the status line says it
    }
    if (response.ok && isOpened(body))
        return { token: body.token, userId: body.userId };
    const error = body?.error;
    const code_ = typeof error?.code === 'string' ? error.code : 'http_error';
    const message = typeof error?.message === 'string' ? error.message : response.statusText || `HTTP ${response.status}`;
    throw new AskdError(code_, message, response.status);
}
function isOpened(body) {
    const b = body;
    return typeof b?.token === 'string' && typeof b?.userId === 'string';
}
/**
 * A page's sign-in from its address: takes `#code=` out of the address bar
 * at once (`history.replaceState`, so no history entry or reload keeps it),
 * then redeems it. `null` when the address has no code. Where the token is
 * kept afterwards (memory, `localStorage`) is the page's choice.
 */
export async function redeemLocationCode(options = {}) {
    const hash = new URLSearchParams(location.hash.slice(1));
    const code = hash.get('code');
    if (code === null)
        return null;
    hash.delete('code');
    const rest = hash.toString();
    history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
    return redeemCode(options.url ?? new URL('.', location.href).href, code, options);
}
