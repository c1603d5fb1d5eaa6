// The agent side: ask a user and wait for the answer over askd's HTTP API.
//
// A wait is never one long request: it long-polls in slices (`pollSeconds`,
// under the 60 s many proxies allow) and comes back by requestId when a
// poll drops, times out or gets a 5xx (a daemon restarting answers 503
// shutting_down and keeps the question). An ask carries an
// Idempotency-Key, so retrying it after a lost reply asks nothing twice.

import { Backoff, sleep, type BackoffOptions } from './backoff.js';
import { AskdError, AskdUnavailable } from './errors.js';
import type { Action, AskBody, PendingBody, PendingQuestion, Question, QuestionResult } from './protocol.js';
import { baseUrl, resolveToken, seg, type TokenSource } from './urls.js';

/** Extra time over a long-poll's wait before the link counts as dead. */
const READ_GRACE_MS = 15_000;
const CALL_TIMEOUT_MS = 10_000;

export interface AgentOptions {
  /** askd's public URL, e.g. `http://127.0.0.1:8765` or `https://tools.example.com/askd/`. */
  url: string;
  /** An agent token, or a function returning one (called for every request). */
  token: TokenSource;
  /** Seconds one long-poll waits (default 25, at most 55). */
  pollSeconds?: number;
  /** How long to keep retrying while askd is unreachable or answers 5xx, ms (default 120000). */
  retryForMs?: number;
  backoff?: BackoffOptions;
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface AskOptions extends CallOptions {
  /** Default: a fresh random key, kept across this call's retries. */
  idempotencyKey?: string;
}

/** An ask of questions: `questions` required, no `action` (that is `requestApproval`'s). */
export type QuestionsBody = Omit<AskBody, 'questions' | 'action' | 'quorum'> & { questions: Question[] };

/**
 * An approval's ask (protocol section 17): `action` in place of `questions`,
 * whom to ask (`userId` or `to`), `quorum` and the rest of an ask. No
 * `onTimeout`: silence is never consent.
 */
export type ApprovalBody = Omit<AskBody, 'questions' | 'action' | 'onTimeout'> & { action: Action };

export interface ApprovalOptions extends AskOptions {
  /** false: resolve at once with the pending body (its requestId to `wait` on or `withdraw`). Default true. */
  wait?: boolean;
}

export interface WaitOptions extends CallOptions {
  /** Give up after this long (ms) and return the result as it is, perhaps still pending. */
  timeoutMs?: number;
}

interface Request {
  method: string;
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
}

export class Agent {
  readonly url: string;
  private readonly base: URL;
  private readonly token: TokenSource;
  private readonly pollSeconds: number;
  private readonly retryForMs: number;
  private readonly backoff: BackoffOptions;
  private readonly fetch: typeof fetch;

  constructor({ url, token, pollSeconds = 25, retryForMs = 120_000, backoff = { base: 200, cap: 5_000 }, fetch: f }: AgentOptions) {
    if (!(pollSeconds > 0 && pollSeconds <= 55)) throw new RangeError('pollSeconds must be in (0, 55]');
    this.base = baseUrl(url);
    this.url = this.base.href;
    this.token = token;
    this.pollSeconds = pollSeconds;
    this.retryForMs = retryForMs;
    this.backoff = backoff;
    this.fetch = f ?? globalThis.fetch.bind(globalThis);
  }

  /** Ask and wait until the question is answered, times out, is declined or cancelled. */
  async ask(sessionId: string, body: QuestionsBody, options: AskOptions = {}): Promise<QuestionResult> {
    const first = await this.post(sessionId, body, this.pollSeconds, options);
    if (first.status !== 'pending') return first as QuestionResult;
    return this.wait(sessionId, first.requestId, options);
  }

  /** Ask without waiting: the pending body (201), or the result if it already ended. */
  async submit(sessionId: string, body: QuestionsBody, options: AskOptions = {}): Promise<PendingBody | QuestionResult> {
    return this.post(sessionId, body, 0, options);
  }

  /**
   * Ask permission to run `body.action` and wait until it is approved,
   * denied, timed out or withdrawn, riding through dropped links and
   * restarts as `ask` does. Run the action only when `approved` is true, and
   * with the result's `arguments` (the person may have edited them);
   * `receipt` is askd's signed proof (`verifyReceipt`).
   */
  async requestApproval(sessionId: string, body: ApprovalBody, options: ApprovalOptions = {}): Promise<QuestionResult> {
    const { wait = true, ...rest } = options;
    const first = await this.post(sessionId, body, wait ? this.pollSeconds : 0, rest);
    if (!wait || first.status !== 'pending') return first as QuestionResult;
    return this.wait(sessionId, first.requestId, rest);
  }

  /** The question's result now (`pending` while it waits). */
  async result(sessionId: string, requestId: string, options: CallOptions = {}): Promise<QuestionResult> {
    return this.poll(sessionId, requestId, 0, options.signal);
  }

  /** Wait until the question ends, re-attaching by requestId after a dropped poll or a restart. */
  async wait(sessionId: string, requestId: string, { timeoutMs, signal }: WaitOptions = {}): Promise<QuestionResult> {
    const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
    for (;;) {
      const left = Math.max(0, Math.min(this.pollSeconds * 1000, deadline - Date.now()));
      const result = await this.poll(sessionId, requestId, left / 1000, signal);
      if (result.status !== 'pending' || Date.now() >= deadline) return result;
    }
  }

  /** Take a question back: a pending one ends `cancelled`; an ended one's result comes back unchanged. */
  async withdraw(sessionId: string, requestId: string, options: CallOptions = {}): Promise<QuestionResult> {
    return this.json(await this.call({ method: 'DELETE', path: questionPath(sessionId, requestId), signal: options.signal }));
  }

  /**
   * Move the question's deadline `seconds` later (protocol section 5, "Extending a question"; a
   * daemon without it answers 404 `not_found`). Resolves with the result
   * (pending, the new `expiresAt`); a refusal is an AskdError (`not_allowed`).
   */
  async extend(sessionId: string, requestId: string, seconds: number, options: CallOptions = {}): Promise<QuestionResult> {
    const path = `${questionPath(sessionId, requestId)}/extend`;
    return this.json(await this.call({ method: 'POST', path, body: { seconds }, signal: options.signal }));
  }

  /** The session's pending questions, oldest first. */
  async pending(sessionId: string, options: CallOptions = {}): Promise<PendingQuestion[]> {
    const body = await this.json<{ pending: PendingQuestion[] }>(
      await this.call({ method: 'GET', path: `v1/sessions/${seg(sessionId)}/questions`, signal: options.signal }),
    );
    return body.pending;
  }

  /** Cancel every pending question of the session and its sub-sessions; how many ended. */
  async cancelSession(sessionId: string, options: CallOptions = {}): Promise<number> {
    const path = `v1/sessions/${seg(sessionId)}/cancel`;
    return (await this.json<{ cancelled: number }>(await this.call({ method: 'POST', path, signal: options.signal }))).cancelled;
  }

  // ---- HTTP ----------------------------------------------------------------

  private async post(sessionId: string, body: AskBody, wait: number, options: AskOptions): Promise<PendingBody | QuestionResult> {
    const response = await this.call({
      method: 'POST',
      path: `v1/sessions/${seg(sessionId)}/questions`,
      query: wait ? { wait: String(wait) } : undefined,
      body,
      headers: { 'Idempotency-Key': options.idempotencyKey ?? randomKey() },
      timeoutMs: wait * 1000 + READ_GRACE_MS,
      signal: options.signal,
    });
    return this.json(response);
  }

  private async poll(sessionId: string, requestId: string, waitSeconds: number, signal?: AbortSignal): Promise<QuestionResult> {
    const wait = Math.round(waitSeconds * 1000) / 1000;
    const response = await this.call({
      method: 'GET',
      path: questionPath(sessionId, requestId),
      query: wait ? { wait: String(wait) } : undefined,
      timeoutMs: wait * 1000 + READ_GRACE_MS,
      signal,
    });
    return this.json(response);
  }

  /** A 2xx body, or the AskdError askd's error body describes. */
  private async json<T>(response: Response): Promise<T> {
    if (response.ok) return (await response.json()) as T;
    let code = 'http_error';
    let message = response.statusText || `HTTP ${response.status}`;
    let details;
    try {
      const { error } = await response.json();
      ({ code, message, details } = error);
    } catch {
      // not askd's envelope (a proxy's page): keep the status line
    }
    throw new AskdError(code, message, response.status, details);
  }

  /** One request, retried while askd is unreachable or answers 5xx, for up to `retryForMs` of failure. */
  private async call(req: Request): Promise<Response> {
    const url = new URL(req.path, this.base);
    for (const [k, v] of Object.entries(req.query ?? {})) url.searchParams.set(k, v);
    const backoff = new Backoff(this.backoff);
    let failingSince: number | null = null;
    for (;;) {
      let problem: string;
      try {
        const timeout = AbortSignal.timeout(req.timeoutMs ?? CALL_TIMEOUT_MS);
        const response = await this.fetch(url, {
          method: req.method,
          headers: {
            Authorization: `Bearer ${await resolveToken(this.token)}`,
            ...(req.body === undefined ? {} : { 'Content-Type': 'application/json' }),
            ...req.headers,
          },
          body: req.body === undefined ? undefined : JSON.stringify(req.body),
          signal: req.signal ? AbortSignal.any([req.signal, timeout]) : timeout,
        });
        if (response.status < 500) return response;
        problem = `HTTP ${response.status}`;
        await response.body?.cancel();
      } catch (err) {
        if (req.signal?.aborted) throw req.signal.reason;
        problem = err instanceof Error ? err.message : String(err); // a dropped link or a timed-out poll
      }
      const now = Date.now();
      failingSince ??= now;
      if (now - failingSince >= this.retryForMs) throw new AskdUnavailable(this.url, problem);
      await sleep(backoff.next(), req.signal);
    }
  }
}

function questionPath(sessionId: string, requestId: string): string {
  return `v1/sessions/${seg(sessionId)}/questions/${seg(requestId)}`;
}

/** 128 random bits as hex (crypto.randomUUID needs a secure context; this does not). */
export function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
