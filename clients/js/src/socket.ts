// The WebSocket the inbox speaks through: the platform's own (browsers,
// Node 22+), else the optional `ws` package (Node 20).

/** The part of the WebSocket API the inbox uses; browsers' and `ws`'s both fit. */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: unknown) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** Opens a socket to `url` carrying `token`. */
export type SocketFactory = (url: URL, token: string) => SocketLike;

export const OPEN = 1;

export class NoWebSocket extends Error {
  constructor() {
    super('no WebSocket here: on Node 20, install the "ws" package (npm install ws)');
  }
}

export type WebSocketClass = new (url: string) => SocketLike;

/** A factory for `WebSocketClass`, or the platform's, or `ws`'s. */
export async function socketFactory(given?: WebSocketClass): Promise<SocketFactory> {
  const native = given ?? (globalThis as { WebSocket?: WebSocketClass }).WebSocket;
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
  let mod: { default: new (url: string, options: object) => SocketLike };
  try {
    mod = await import(name);
  } catch {
    throw new NoWebSocket();
  }
  return (url, token) => new mod.default(url.href, { headers: { Authorization: `Bearer ${token}` } });
}
