// The user side: one reconnecting WebSocket that shows a person every
// question waiting for them, each once.
//
// What it does for the application (askd's protocol, section 3):
// - subscribes (`*` by default) on every connection, so askd re-pushes
//   whatever is pending, and de-duplicates by requestId;
// - after each re-subscribe, closes (reason `ended`) the questions it knew
//   that askd no longer re-pushes: they ended while the link was down;
// - keeps every answer, extend and decline until askd replies to it,
//   resending after each reconnect (a resend of something already taken
//   gets `not_pending`, so resending is harmless);
// - reconnects with capped exponential backoff and full jitter, checks the
//   link with pings, and may pause while the browser is offline or hidden.

import { Backoff, type BackoffOptions } from './backoff.js';
import { AskdError, InboxClosed } from './errors.js';
import { fetchHistory } from './history.js';
import type {
  AckPayload,
  ApprovalGiven,
  AskedPayload,
  CancelledPayload,
  ErrorPayload,
  EscalatedPayload,
  ExtendedPayload,
  HistoryEntry,
  Question,
  ServerEvent,
  VotedPayload,
} from './protocol.js';
import { NoWebSocket, OPEN, socketFactory, type SocketFactory, type SocketLike, type WebSocketClass } from './socket.js';
import { resolveToken, wsUrl, type TokenSource } from './urls.js';

/** A question waiting for the user. */
export interface AskedQuestion {
  sessionId: string;
  requestId: string;
  questions: Question[];
  metadata: Record<string, unknown>;
  createdAt: string;
  /** Moves later when the question is extended. */
  expiresAt: string;
  /**
   * The event's payload as askd sent it, fields this client does not know
   * included. Kept current: an extension updates its `expiresAt` and
   * `extensionLeftSeconds`, an escalation step its `to`, `escalations` and
   * `escalatedTo` (askd 1.2).
   */
  payload: AskedPayload;
}

/**
 * Why a question left the inbox: askd's `answered`, `timeout`, `cancelled`
 * (and, from askd 1.2, `declined`, `reassigned`), or this client's own
 * `ended`: it ended while the link was down, and how is not known.
 */
export type CloseReason = 'answered' | 'timeout' | 'cancelled' | 'declined' | 'reassigned' | 'ended' | (string & {});

export interface ClosedQuestion {
  sessionId: string;
  requestId: string;
  reason: CloseReason;
  /** Who answered or declined, when askd says (askd 1.2); null for an admin without a name. */
  answeredBy?: string | null;
  /** How they did: `ws`, `link`, `mcp` or `admin` (askd 1.2). */
  via?: string;
  /** The reason given with a decline, if any (askd 1.2). */
  declineReason?: string;
  /** A `timeout` that took the ask's `onTimeout` default: the answers it ended with (askd 1.3). */
  answers?: Record<string, string | string[]>;
  /** true with those `answers` (askd 1.3). */
  defaulted?: boolean;
}

export interface ExtendedQuestion {
  sessionId: string;
  requestId: string;
  expiresAt: string;
  /** What is left of the person's allowance, when the ask gave one (askd 1.2). */
  extensionLeftSeconds?: number;
}

/** An escalation step widened the audience of a question shown here (askd 1.2). */
export interface EscalatedQuestion {
  sessionId: string;
  requestId: string;
  /** Whom it is asked of now: user ids and `group:G`. */
  to: string[];
  /** The entries the steps taken added (the tail of `to`). */
  escalatedTo: string[];
  escalations: number;
}

/** An action to approve got an approval and needs more (askd 1.3): live, or caught up by a re-push. */
export interface VotedQuestion {
  sessionId: string;
  requestId: string;
  /** The approvals so far, in order. */
  approvals: ApprovalGiven[];
  /** The approvals it needs (its quorum). */
  needed: number;
}

export type ConnectionState =
  | { state: 'connecting' }
  /** Connected, subscribed, and the re-push complete. */
  | { state: 'connected' }
  /** Between attempts: the next one at `retryAt` (ms since the epoch). */
  | { state: 'waiting'; retryAt: number }
  | { state: 'paused' }
  /**
   * The inbox stopped; a new token needs a new Inbox. `error.code` says why:
   * askd's refusal of the token (`unauthorized` with status 401, `forbidden`
   * with 403: not a user token), `token_ended` (askd closed the link with
   * 4001: the token expired or was revoked), or `no_websocket`.
   */
  | { state: 'rejected'; error: AskdError }
  | { state: 'closed' };

export interface InboxEvents {
  asked: AskedQuestion;
  closed: ClosedQuestion;
  extended: ExtendedQuestion;
  escalated: EscalatedQuestion;
  voted: VotedQuestion;
  state: ConnectionState;
  /** askd refused the subscribe (a session it does not accept, too many subscriptions): nothing of it will show. */
  refused: AskdError;
  /** Any other `error` frame that answers no call of this inbox. */
  error: AskdError;
}

/** askd's reply to an answer or a decline. */
export type AnswerVerdict = { accepted: true } | { accepted: false; reason: string };
/** askd's reply to an approval (askd 1.3): the approvals it has and needs, or why not (`already_voted`, `not_pending`). */
export type ApproveVerdict = { accepted: true; approvals: number; needed: number } | { accepted: false; reason: string };
/** askd's reply to an extend. */
export type ExtendVerdict = { extended: true; expiresAt: string } | { extended: false; reason: string };

/** The close code askd ends a WebSocket with when its token expires or is revoked. */
export const TOKEN_ENDED = 4001;

export interface InboxOptions {
  /** askd's public URL (`http://127.0.0.1:8765`, `https://tools.example.com/askd/`) or its `/ws` URL. */
  url: string;
  /** A user token, or a function returning one (called on every connect). */
  token: TokenSource;
  /** The session to follow (default `*`: every session of the user). */
  sessionId?: string;
  backoff?: BackoffOptions;
  /** ms between pings that check the link (default 25000; 0: none). */
  heartbeatMs?: number;
  /** Browsers: stay disconnected while `navigator.onLine` is false. */
  pauseWhileOffline?: boolean;
  /** Browsers: disconnect while the page is hidden, reconnect when it shows. */
  pauseWhileHidden?: boolean;
  /** A WebSocket class to use instead of the platform's (or `ws`'s). */
  WebSocket?: WebSocketClass;
  /** How many ended requestIds to remember, so a late re-push is not shown again (default 10000). */
  remember?: number;
}

interface Outgoing {
  frame: Record<string, unknown>;
  resolve: (payload: AckPayload) => void;
  reject: (err: Error) => void;
}

type Listener<T> = (event: T) => void;

export class Inbox {
  readonly url: URL;
  readonly sessionId: string;
  private readonly token: TokenSource;
  private readonly backoff: Backoff;
  private readonly heartbeatMs: number;
  private readonly remember: number;
  private readonly factory: Promise<SocketFactory>;
  private readonly listeners = new Map<keyof InboxEvents, Set<Listener<never>>>();
  private readonly known = new Map<string, { question: AskedQuestion; gen: number }>();
  private readonly ended = new Map<string, true>(); // insertion-ordered: oldest dropped first
  private readonly outbox = new Map<string, Outgoing>();
  private readonly pausedFor = new Set<string>();
  private readonly unhook: (() => void)[] = [];
  private current: ConnectionState = { state: 'closed' };
  private ws: SocketLike | null = null;
  private live = false; // the socket is open and subscribed to
  private gen = 0; // +1 per socket
  private replayed = new Set<string>();
  private subscribeId = '';
  private calls = 0;
  private started = false;
  private busy = false; // between sockets: resolving the token, or probing why one never opened
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private beat: ReturnType<typeof setInterval> | undefined;
  private awaitingPong = false;

  constructor(options: InboxOptions) {
    this.url = wsUrl(options.url);
    this.sessionId = options.sessionId ?? '*';
    this.token = options.token;
    this.backoff = new Backoff(options.backoff);
    this.heartbeatMs = options.heartbeatMs ?? 25_000;
    this.remember = options.remember ?? 10_000;
    this.factory = socketFactory(options.WebSocket);
    this.factory.catch(() => {}); // reported by start()'s first connect
    this.watchBrowser(options);
  }

  // ---- the application's side -------------------------------------------

  /** Start connecting; the inbox then stays connected until close(). */
  start(): this {
    if (!this.started && !this.stopped) {
      this.started = true;
      void this.connect();
    }
    return this;
  }

  /** Disconnect for good: pending calls reject with InboxClosed. */
  close(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.timer);
    this.detach();
    for (const off of this.unhook) off();
    const err = new InboxClosed();
    for (const entry of this.outbox.values()) entry.reject(err);
    this.outbox.clear();
    this.setState({ state: 'closed' });
  }

  /** Listen to an event; returns the function that stops listening. */
  on<K extends keyof InboxEvents>(type: K, listener: Listener<InboxEvents[K]>): () => void {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(listener as Listener<never>);
    return () => set.delete(listener as Listener<never>);
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** The questions waiting, as far as this inbox knows, oldest first. */
  get questions(): AskedQuestion[] {
    return [...this.known.values()].map((k) => k.question);
  }

  /** Resolves once connected and subscribed (at once if it is); rejects if the inbox stops first. */
  ready(): Promise<void> {
    if (this.current.state === 'connected') return Promise.resolve();
    if (this.current.state === 'rejected') return Promise.reject(this.current.error);
    if (this.stopped) return Promise.reject(new InboxClosed());
    return new Promise((resolve, reject) => {
      const off = this.on('state', (s) => {
        if (s.state === 'connected') resolve();
        else if (s.state === 'rejected') reject(s.error);
        else if (s.state === 'closed') reject(new InboxClosed());
        else return;
        off();
      });
    });
  }

  /**
   * Answer a question: `answers` keyed by question text, a string each (a
   * list of strings for a multiSelect question). Resolves with askd's
   * verdict; `{accepted: false, reason: 'not_pending'}` when it had ended
   * (answered in another tab, timed out, cancelled). After a dropped link
   * the verdict on a resend may be `not_pending` although the first copy
   * was the one askd took. Rejects with AskdError `invalid_answer` when the
   * answers do not fit the question.
   */
  async answer(requestId: string, answers: Record<string, string | string[]>, options: { sessionId?: string } = {}): Promise<AnswerVerdict> {
    const frame = { type: 'ask_user_questions_result', sessionId: this.sessionOf(requestId, options), requestId, answers };
    return (await this.call(frame)) as AnswerVerdict;
  }

  /** Ask for `seconds` more (askd 1.2; an older askd rejects with AskdError `unknown_type`). */
  async extend(requestId: string, seconds: number, options: { sessionId?: string } = {}): Promise<ExtendVerdict> {
    const frame = { type: 'extend', sessionId: this.sessionOf(requestId, options), requestId, seconds };
    return (await this.call(frame)) as ExtendVerdict;
  }

  /** Refuse to answer, with an optional reason (askd 1.2; an older askd rejects with `unknown_type`). */
  async decline(requestId: string, reason?: string, options: { sessionId?: string } = {}): Promise<AnswerVerdict> {
    const frame = { type: 'decline', sessionId: this.sessionOf(requestId, options), requestId, ...(reason === undefined ? {} : { reason }) };
    return (await this.call(frame)) as AnswerVerdict;
  }

  /**
   * The user's history (askd 1.3): the last 100 questions that ended with
   * them in their audience, newest first, each with how it ended, its title
   * (header), its answers while askd still keeps them, who answered and
   * through what.
   * One HTTP request with the inbox's token (start() is not needed). Rejects
   * with AskdError when askd refuses, AskdUnavailable when unreachable.
   */
  async history(): Promise<HistoryEntry[]> {
    return (await fetchHistory(this.url, this.token)).questions;
  }

  /**
   * Approve an action (askd 1.3): `arguments` edited (an `editable` action
   * only), `scope` `always` where the action offers it. Rejects with AskdError
   * `invalid_request` when askd refuses the frame (arguments failing the schema:
   * `details`); a denial is decline().
   */
  async approve(
    requestId: string,
    options: { arguments?: Record<string, unknown>; scope?: 'once' | 'always'; sessionId?: string } = {},
  ): Promise<ApproveVerdict> {
    const { arguments: args, scope } = options;
    const frame = {
      type: 'approve',
      sessionId: this.sessionOf(requestId, options),
      requestId,
      ...(args === undefined ? {} : { arguments: args }),
      ...(scope === undefined ? {} : { scope }),
    };
    return (await this.call(frame)) as ApproveVerdict;
  }

  /** Skip the rest of the backoff wait (a "Reconnect now" button). */
  retryNow(): void {
    if (this.stopped || !this.started || this.ws !== null || this.busy || this.pausedFor.size) return;
    clearTimeout(this.timer);
    void this.connect();
  }

  /** Disconnect until resume(); answers asked meanwhile wait in the outbox. */
  pause(): void {
    this.pauseFor('app');
  }

  resume(): void {
    this.resumeFor('app');
  }

  // ---- calls that wait for an ack ------------------------------------------

  /** The question's session: given, or known from its ask; an unknown question without one is an error. */
  private sessionOf(requestId: string, options: { sessionId?: string }): string {
    const sessionId = options.sessionId ?? this.known.get(requestId)?.question.sessionId;
    if (sessionId === undefined) throw new Error(`unknown question ${requestId}: pass options.sessionId`);
    return sessionId;
  }

  private call(body: Record<string, unknown>): Promise<AckPayload> {
    if (this.stopped) return Promise.reject(new InboxClosed());
    this.calls += 1;
    const id = `call-${this.calls}`;
    const frame = { ...body, id };
    return new Promise((resolve, reject) => {
      this.outbox.set(id, { frame, resolve, reject });
      // Not live: the next connection sends it, after its subscribe.
      if (this.live) this.send(frame);
    });
  }

  // ---- the connection --------------------------------------------------------

  private async connect(): Promise<void> {
    this.timer = undefined;
    if (this.stopped || this.ws !== null || this.busy || this.pausedFor.size) return;
    this.setState({ state: 'connecting' });
    let ws: SocketLike;
    this.busy = true;
    try {
      const [factory, token] = await Promise.all([this.factory, resolveToken(this.token)]);
      if (this.stopped || this.pausedFor.size) return;
      ws = factory(this.url, token);
    } catch (err) {
      if (err instanceof NoWebSocket) {
        this.stopped = true; // retrying cannot help
        this.setState({ state: 'rejected', error: new AskdError('no_websocket', err.message) });
      } else {
        this.schedule(); // the token function failed: try again later
      }
      return;
    } finally {
      this.busy = false;
    }
    this.ws = ws;
    this.gen += 1;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.opened();
    };
    ws.onmessage = (event) => this.frame(typeof event.data === 'string' ? event.data : String(event.data));
    ws.onerror = () => {}; // onclose follows
    ws.onclose = (event) => void this.lost(ws, opened, (event as { code?: number } | undefined)?.code);
  }

  private opened(): void {
    this.replayed = new Set();
    this.subscribeId = `subscribe-${this.gen}`;
    this.live = true;
    this.send({ type: 'subscribe', sessionId: this.sessionId, id: this.subscribeId });
    for (const entry of this.outbox.values()) this.send(entry.frame);
    this.startHeartbeat();
  }

  private async lost(ws: SocketLike, opened: boolean, code?: number): Promise<void> {
    if (ws !== this.ws) return;
    this.detach();
    if (this.stopped || this.pausedFor.size) return;
    if (code === TOKEN_ENDED) {
      // The same token would be refused: the application must get a new one.
      this.stopped = true;
      this.setState({ state: 'rejected', error: new AskdError('token_ended', 'askd ended this token: it expired or was revoked') });
      return;
    }
    if (!opened) {
      this.busy = true;
      const refused = await this.probe().finally(() => (this.busy = false));
      if (this.stopped || this.pausedFor.size) return;
      if (refused) {
        this.stopped = true;
        this.setState({ state: 'rejected', error: refused });
        return;
      }
    }
    this.schedule();
  }

  /** After a socket that never opened: was the token the reason? (A browser cannot see the upgrade's status.) */
  private async probe(): Promise<AskdError | null> {
    if (typeof fetch !== 'function') return null;
    const url = new URL(this.url);
    url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
    try {
      const response = await fetch(url, { headers: { Authorization: `Bearer ${await resolveToken(this.token)}` }, cache: 'no-store' });
      if (response.status !== 401 && response.status !== 403) return null;
      const body = await response.json().catch(() => ({}));
      const code = body?.error?.code ?? (response.status === 401 ? 'unauthorized' : 'forbidden');
      return new AskdError(code, body?.error?.message ?? 'askd refused the token', response.status);
    } catch {
      return null; // unreachable: keep retrying
    }
  }

  private schedule(): void {
    const delay = this.backoff.next();
    this.setState({ state: 'waiting', retryAt: Date.now() + delay });
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  private startHeartbeat(): void {
    if (!this.heartbeatMs) return;
    this.awaitingPong = false;
    this.beat = setInterval(() => {
      const ws = this.ws;
      if (ws === null) return;
      if (this.awaitingPong) {
        // No pong for a whole interval: the link is dead even if the socket has not noticed.
        void this.lost(ws, true);
        return;
      }
      this.awaitingPong = this.send({ type: 'ping', id: 'heartbeat' });
    }, this.heartbeatMs);
  }

  private send(frame: Record<string, unknown>): boolean {
    const ws = this.ws;
    if (ws === null || ws.readyState !== OPEN) return false;
    try {
      ws.send(JSON.stringify(frame));
      return true;
    } catch {
      return false; // closing: the next connection resends what matters
    }
  }

  private detach(): void {
    clearInterval(this.beat);
    this.beat = undefined;
    this.live = false;
    const ws = this.ws;
    this.ws = null;
    if (ws === null) return;
    ws.onopen = ws.onmessage = ws.onclose = null;
    ws.onerror = () => {}; // `ws` throws an error event nobody listens to
    try {
      ws.close();
    } catch {
      // already closing
    }
  }

  // ---- frames ---------------------------------------------------------------------

  private frame(text: string): void {
    let frame: ServerEvent;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (frame === null || typeof frame !== 'object') return;
    switch (frame.type) {
      case 'ask_user_questions':
        return this.asked(frame.sessionId, frame.payload);
      case 'ask_user_questions_cancelled': {
        const { requestId, reason, ...who } = frame.payload;
        return this.end(requestId, reason, who);
      }
      case 'ask_user_questions_extended':
        return this.extended(frame.payload);
      case 'ask_user_questions_escalated':
        return this.escalated(frame.payload);
      case 'ask_user_questions_voted':
        return this.voted(frame.payload);
      case 'ack':
        return this.ack(frame.id, frame.payload ?? {});
      case 'error':
        return this.error(frame.id, frame.payload);
      case 'pong':
        this.awaitingPong = false;
        return;
      default:
        return; // session_snapshot, and types from newer daemons
    }
  }

  private asked(sessionId: string, payload: AskedPayload): void {
    if (this.sessionId !== '*' && sessionId !== this.sessionId) return; // live events come for every session
    const requestId = payload.requestId;
    this.replayed.add(requestId);
    const known = this.known.get(requestId);
    if (known !== undefined) return this.caughtUp(known.question, payload); // a re-push: shown already
    if (this.ended.has(requestId)) return;
    const question: AskedQuestion = {
      sessionId,
      requestId,
      questions: payload.questions ?? [], // none for an action to approve (payload.action)
      metadata: payload.metadata ?? {},
      createdAt: payload.createdAt,
      expiresAt: payload.expiresAt,
      payload,
    };
    this.known.set(requestId, { question, gen: this.gen });
    this.emit('asked', question);
  }

  /** A re-push of a question shown here: what changed while the link was down (more time, an escalation step) is told as if live. */
  private caughtUp(question: AskedQuestion, payload: AskedPayload): void {
    const { requestId, expiresAt, extensionLeftSeconds, to, escalatedTo, escalations } = payload;
    if (expiresAt !== question.expiresAt || extensionLeftSeconds !== question.payload.extensionLeftSeconds) {
      this.extended({ requestId, expiresAt, ...(typeof extensionLeftSeconds === 'number' ? { extensionLeftSeconds } : {}) });
    }
    if (typeof escalations === 'number' && escalations !== question.payload.escalations && Array.isArray(to) && Array.isArray(escalatedTo)) {
      this.escalated({ requestId, to, escalatedTo, escalations });
    }
    const { approvals, quorum } = payload;
    if (Array.isArray(approvals) && approvals.length !== (question.payload.approvals ?? []).length && typeof quorum === 'number') {
      this.voted({ requestId, approvals, needed: quorum });
    }
  }

  private end(requestId: string, reason: string, who: Partial<Pick<CancelledPayload, 'answeredBy' | 'via' | 'declineReason' | 'answers' | 'defaulted'>> = {}): void {
    const known = this.known.get(requestId);
    this.known.delete(requestId);
    this.ended.set(requestId, true);
    while (this.ended.size > this.remember) this.ended.delete(this.ended.keys().next().value as string);
    if (known === undefined) return; // never shown here
    const closed: ClosedQuestion = { sessionId: known.question.sessionId, requestId, reason };
    if (who.answeredBy !== undefined) closed.answeredBy = who.answeredBy;
    if (typeof who.via === 'string') closed.via = who.via;
    if (typeof who.declineReason === 'string') closed.declineReason = who.declineReason;
    if (who.defaulted === true && who.answers && typeof who.answers === 'object') {
      closed.answers = who.answers;
      closed.defaulted = true;
    }
    this.emit('closed', closed);
  }

  private extended(payload: ExtendedPayload): void {
    const { requestId, expiresAt, extensionLeftSeconds } = payload;
    const known = this.known.get(requestId);
    if (known === undefined) return;
    const question = known.question;
    question.expiresAt = question.payload.expiresAt = expiresAt;
    const event: ExtendedQuestion = { sessionId: question.sessionId, requestId, expiresAt };
    if (typeof extensionLeftSeconds === 'number') {
      question.payload.extensionLeftSeconds = event.extensionLeftSeconds = extensionLeftSeconds;
    }
    this.emit('extended', event);
  }

  private escalated(payload: EscalatedPayload): void {
    const { requestId, to, escalatedTo, escalations } = payload;
    const known = this.known.get(requestId);
    if (known === undefined) return;
    const question = known.question;
    Object.assign(question.payload, { to, escalatedTo, escalations });
    this.emit('escalated', { sessionId: question.sessionId, requestId, to, escalatedTo, escalations });
  }

  private voted(payload: VotedPayload): void {
    const { requestId, approvals, needed } = payload;
    const known = this.known.get(requestId);
    if (known === undefined) return;
    const question = known.question;
    Object.assign(question.payload, { approvals, quorum: needed });
    this.emit('voted', { sessionId: question.sessionId, requestId, approvals, needed });
  }

  private ack(id: unknown, payload: AckPayload): void {
    if (id === this.subscribeId) return this.subscribed(true);
    const entry = typeof id === 'string' ? this.outbox.get(id) : undefined;
    if (entry === undefined) return;
    this.outbox.delete(id as string);
    entry.resolve(payload);
  }

  private error(id: unknown, payload: ErrorPayload): void {
    const err = new AskdError(payload.code, payload.message, undefined, payload.details);
    const entry = typeof id === 'string' ? this.outbox.get(id) : undefined;
    if (entry !== undefined) {
      this.outbox.delete(id as string);
      entry.reject(err);
      return;
    }
    if (id !== this.subscribeId) return this.emit('error', err);
    this.emit('refused', err);
    this.subscribed(false);
  }

  /** The subscribe's re-push is complete: what it did not re-push ended while the link was down. */
  private subscribed(replayed: boolean): void {
    if (replayed) {
      for (const [requestId, { gen }] of [...this.known]) {
        if (gen < this.gen && !this.replayed.has(requestId)) this.end(requestId, 'ended');
      }
    }
    this.backoff.reset();
    this.setState({ state: 'connected' });
  }

  // ---- browsers: offline and hidden ----------------------------------------

  private watchBrowser(options: InboxOptions): void {
    const win = globalThis as { addEventListener?: typeof addEventListener; removeEventListener?: typeof removeEventListener; navigator?: Navigator; document?: Document };
    if (typeof win.addEventListener !== 'function' || typeof win.removeEventListener !== 'function') return;
    const listen = (target: EventTarget, type: string, fn: () => void) => {
      target.addEventListener(type, fn);
      this.unhook.push(() => target.removeEventListener(type, fn));
    };
    listen(globalThis, 'online', () => {
      this.resumeFor('offline');
      this.retryNow();
    });
    if (options.pauseWhileOffline && win.navigator) {
      listen(globalThis, 'offline', () => this.pauseFor('offline'));
      if (win.navigator.onLine === false) this.pausedFor.add('offline');
    }
    const doc = win.document;
    if (options.pauseWhileHidden && doc) {
      listen(doc, 'visibilitychange', () => (doc.hidden ? this.pauseFor('hidden') : this.resumeFor('hidden')));
      if (doc.hidden) this.pausedFor.add('hidden');
    }
  }

  private pauseFor(why: string): void {
    if (this.stopped) return;
    this.pausedFor.add(why);
    clearTimeout(this.timer);
    this.detach();
    if (this.started) this.setState({ state: 'paused' });
  }

  private resumeFor(why: string): void {
    if (!this.pausedFor.delete(why) || this.pausedFor.size || this.stopped || !this.started || this.busy) return;
    this.backoff.reset();
    void this.connect();
  }

  // ---- events ------------------------------------------------------------------

  private setState(state: ConnectionState): void {
    this.current = state;
    this.emit('state', state);
  }

  private emit<K extends keyof InboxEvents>(type: K, event: InboxEvents[K]): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) {
      try {
        (listener as Listener<InboxEvents[K]>)(event);
      } catch (err) {
        console.error('askd-client: a listener failed', err);
      }
    }
  }
}
