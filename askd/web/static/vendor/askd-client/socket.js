// The WebSocket the inbox speaks through: the platform's own (browsers,
// Node 22+), else the optional `ws` package (Node 20).
export const OPEN = 1;
export class NoWebSocket extends Error {
    constructor() {
        super('no WebSocket here: on Node 20, install the "ws" package (npm install ws)');
    }
}
/** A factory for `WebSocketClass`, or the platform's, or `ws`'s. */
export async function socketFactory(given) {
    const native = given ?? globalThis.WebSocket;
    if (native) {
        // A browser cannot set headers on a WebSocket: the token goes in the query.
        return (url, token) => {
            const withToken = new URL(url);
            withToken.searchParams.set('token', token);
            return new native(withToken.href);
        };
    }
    // The name is held in a variable so that bundlers for the browser leave it alone.
    const name = 'ws';
    let mod;
    try {
        mod = await import(name);
    }
    catch {
        throw new NoWebSocket();
    }
    return (url, token) => new mod.default(url.href, { headers: { Authorization: `Bearer ${token}` } });
}
