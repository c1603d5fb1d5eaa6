// The page's one WebSocket, kept alive: a dropped socket reconnects with
// capped exponential backoff and full jitter (seed section 6.2). It never
// touches the panels; the inbox re-subscribes from onOpen.

import { t } from './i18n.js';

// askd closes a socket with this code when its token expires or is revoked.
const TOKEN_ENDED = 4001;

export class Connection {
  /**
   * @param {object} o
   * @param {string} o.url            ws:// or wss:// URL, token included
   * @param {number} [o.base]         first backoff ceiling, ms
   * @param {number} [o.cap]          largest backoff ceiling, ms
   * @param {number} [o.heartbeat]    ms between application pings
   * @param {() => Promise<string|null>} [o.probe]  after a socket that never
   *        opened: a message when retrying is pointless (token refused)
   * @param {() => void} o.onOpen
   * @param {(frame: object) => void} o.onFrame
   * @param {(s: {state: string, retryAt?: number, message?: string}) => void} o.onState
   */
  constructor({ url, base = 250, cap = 5000, heartbeat = 25000, probe, onOpen, onFrame, onState }) {
    Object.assign(this, { url, base, cap, heartbeatMs: heartbeat, probe, onOpen, onFrame, onState });
    this.ws = null;
    this.attempt = 0;
    this.timer = null;
    this.beat = null;
    this.stopped = true;
    this.awaitingPong = false;
    this.probing = false;
  }

  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  start() {
    this.stopped = false;
    this._connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this._detach();
    this.onState({ state: 'stopped' });
  }

  /** Skip the rest of the backoff wait (the "Reconnect now" button, `online`). */
  retryNow() {
    if (this.stopped || this.ws !== null || this.probing) return;
    clearTimeout(this.timer);
    this._connect();
  }

  /** The server has served a full subscribe: the backoff starts over. */
  markHealthy() {
    this.attempt = 0;
  }

  /** Send a frame now; false when there is no open socket. */
  send(frame) {
    if (!this.isOpen) return false;
    this.ws.send(JSON.stringify(frame));
    return true;
  }

  _connect() {
    this.timer = null;
    this.onState({ state: 'connecting' });
    let ws;
    try {
      ws = new WebSocket(this.url);
    } catch {
      this._schedule();
      return;
    }
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.onState({ state: 'connected' });
      this._startHeartbeat();
      this.onOpen();
    };
    ws.onmessage = (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      if (frame && frame.type === 'pong') this.awaitingPong = false;
      if (frame && typeof frame === 'object') this.onFrame(frame);
    };
    ws.onerror = () => {}; // onclose always follows
    ws.onclose = (event) => this._lost(ws, opened, event.code);
  }

  async _lost(ws, opened, code) {
    if (ws !== this.ws) return;
    this._detach();
    if (this.stopped) return;
    if (code === TOKEN_ENDED) {
      // Reconnecting with the same token is refused: ask for a new one.
      this.stopped = true;
      this.onState({ state: 'rejected', message: t('token.ended') });
      return;
    }
    if (!opened && this.probe) {
      this.onState({ state: 'connecting' });
      this.probing = true;
      let fatal = null;
      try {
        fatal = await this.probe();
      } finally {
        this.probing = false;
      }
      if (this.stopped) return;
      if (fatal) {
        this.stopped = true;
        this.onState({ state: 'rejected', message: fatal });
        return;
      }
    }
    this._schedule();
  }

  _schedule() {
    // Full jitter: a uniform delay below the exponential ceiling, so that
    // many tabs dropped at once do not come back in lockstep.
    const ceiling = Math.min(this.cap, this.base * 2 ** this.attempt);
    const delay = Math.random() * ceiling;
    this.attempt = Math.min(this.attempt + 1, 30);
    const retryAt = Date.now() + delay;
    this.onState({ state: 'waiting', retryAt });
    this.timer = setTimeout(() => this._connect(), delay);
  }

  _startHeartbeat() {
    this.awaitingPong = false;
    this.beat = setInterval(() => {
      if (this.awaitingPong) {
        // No pong for a whole interval: the link is dead even if the
        // browser has not noticed. Drop it and reconnect.
        const ws = this.ws;
        this._lost(ws, true);
        return;
      }
      this.awaitingPong = this.send({ type: 'ping', id: 'heartbeat' });
    }, this.heartbeatMs);
  }

  _detach() {
    clearInterval(this.beat);
    this.beat = null;
    const ws = this.ws;
    this.ws = null;
    if (ws === null) return;
    ws.onopen = ws.onmessage = ws.onclose = ws.onerror = null;
    if (ws.readyState === WebSocket.CONNECTING || ws.readyState === WebSocket.OPEN) ws.close();
  }
}
