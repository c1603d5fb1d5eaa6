// The agent side: ask a user and wait for the answer over askd's HTTP API.
//
// A wait is never one long request: it long-polls in slices (`pollSeconds`,
// under the 60 s many proxies allow) and comes back by requestId when a
// poll drops, times out or gets a 5xx (a daemon restarting answers 503
// shutting_down and keeps the question). An ask carries an
// Idempotency-Key, so retrying it after a lost reply asks nothing twice.
import { Backoff, sleep } from './backoff.js';
import { AskdError, AskdUnavailable } from './errors.js';
import { baseUrl, resolveToken, seg } from './urls.js';
/** Extra time over a long-poll's wait before the link counts as dead. */
const READ_GRACE_MS = 15_000;
const CALL_TIMEOUT_MS = 10_000;
export class Agent {
    url;
    base;
    token;
    pollSeconds;
    retryForMs;
    backoff;
    fetch;
    constructor({ url, token, pollSeconds = 25, retryForMs = 120_000, backoff = { base: 200, cap: 5_000 }, fetch: f }) {
        if (!(pollSeconds > 0 && pollSeconds <= 55))
            throw new RangeError('pollSeconds must be in (0, 55]');
        this.base = baseUrl(url);
        this.url = this.base.href;
        this.token = token;
        this.pollSeconds = pollSeconds;
        this.retryForMs = retryForMs;
        this.backoff = backoff;
        this.fetch = f ?? globalThis.fetch.bind(globalThis);
    }
    /** Ask and wait until the question is answered, times out, is declined or cancelled. */
    async ask(sessionId, body, options = {}) {
        const first = await this.post(sessionId, body, this.pollSeconds, options);
        if (first.status !== 'pending')
            return first;
        return this.wait(sessionId, first.requestId, options);
    }
    /** Ask without waiting: the pending body (201), or the result if it already ended. */
    async submit(sessionId, body, options = {}) {
        return this.post(sessionId, body, 0, options);
    }
    /**
     * Ask permission to run `body.action` and wait until it is approved,
     * denied, timed out or withdrawn, riding through dropped links and
     * restarts as `ask` does. Run the action only when `approved` is true, and
     * with the result's `arguments` (the person may have edited them);
     * `receipt` is askd's signed proof (`verifyReceipt`).
     */
    async requestApproval(sessionId, body, options = {}) {
        const { wait = true, ...rest } = options;
        const first = await this.post(sessionId, body, wait ? this.pollSeconds : 0, rest);
        if (!wait || first.status !== 'pending')
            return first;
        return this.wait(sessionId, first.requestId, rest);
    }
    /** The question's result now (`pending` while it waits). */
    async result(sessionId, requestId, options = {}) {
        return this.poll(sessionId, requestId, 0, options.signal);
    }
    /** Wait until the question ends, re-attaching by requestId after a dropped poll or a restart. */
    async wait(sessionId, requestId, { timeoutMs, signal } = {}) {
        const deadline = timeoutMs === undefined ? Infinity : Date.now() + timeoutMs;
        for (;;) {
            const left = Math.max(0, Math.min(this.pollSeconds * 1000, deadline - Date.now()));
            const result = await this.poll(sessionId, requestId, left / 1000, signal);
            if (result.status !== 'pending' || Date.now() >= deadline)
                return result;
        }
    }
    /** Take a question back: a pending one ends `cancelled`; an ended one's result comes back unchanged. */
    async withdraw(sessionId, requestId, options = {}) {
        return this.json(await this.call({ method: 'DELETE', path: questionPath(sessionId, requestId), signal: options.signal }));
    }
    /**
     * Move the question's deadline `seconds` later (protocol section 5, "Extending a question"; a
     * daemon without it answers 404 `not_found`). Resolves with the result
     * (pending, the new `expiresAt`); a refusal is an AskdError (`not_allowed`).
     */
    async extend(sessionId, requestId, seconds, options = {}) {
        const path = `${questionPath(sessionId, requestId)}/extend`;
        return this.json(await this.call({ method: 'POST', path, body: { seconds }, signal: options.signal }));
    }
    /** The session's pending questions, oldest first. */
    async pending(sessionId, options = {}) {
        const body = await this.json(await this.call({ method: 'GET', path: `v1/sessions/${seg(sessionId)}/questions`, signal: options.signal }));
        return body.pending;
    }
    /** Cancel every pending question of the session and its sub-sessions; how many ended. */
    async cancelSession(sessionId, options = {}) {
        const path = `v1/sessions/${seg(sessionId)}/cancel`;
        return (await this.json(await this.call({ method: 'POST', path, signal: options.signal }))).cancelled;
    }
    // ---- HTTP ----------------------------------------------------------------
    async post(sessionId, body, wait, options) {
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
    async poll(sessionId, requestId, waitSeconds, signal) {
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
    async json(response) {
        if (response.ok)
            return (await response.json());
        let code = 'http_error';
        let message = response.statusText || `HTTP ${response.status}`;
        let details;
        try {
            const { error } = await response.json();
            ({ code, message, details } = error);
        }
        catch {
            // not askd's envelope (a proxy's page): keep the status line
        }
        throw new AskdError(code, message, response.status, details);
    }
    /** One request, retried while askd is unreachable or answers 5xx, for up to `retryForMs` of failure. */
    async call(req) {
        const url = new URL(req.path, this.base);
        for (const [k, v] of Object.entries(req.query ?? {}))
            url.searchParams.set(k, v);
        const backoff = new Backoff(this.backoff);
        let failingSince = null;
        for (;;) {
            let problem;
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
                if (response.status < 500)
                    return response;
                problem = `HTTP ${response.status}`;
                await response.body?.cancel();
            }
            catch (err) {
                if (req.signal?.aborted)
                    throw req.signal.reason;
                problem = err instanceof Error ? err.message : String(err); // a dropped link or a timed-out poll
            }
            const now = Date.now();
            failingSince ??= now;
            if (now - failingSince >= this.retryForMs)
                throw new AskdUnavailable(this.url, problem);
            await sleep(backoff.next(), req.signal);
        }
    }
}
function questionPath(sessionId, requestId) {
    return `v1/sessions/${seg(sessionId)}/questions/${seg(requestId)}`;
}
/** 128 random bits as hex (crypto.randomUUID needs a secure context; this does not). */
export function randomKey() {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
