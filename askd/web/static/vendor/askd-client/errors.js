// What the client throws: one class for every refusal askd explains (an
// HTTP error body or a WebSocket `error` frame), one for giving up on a
// daemon that does not answer at all.
/** askd refused a call: `code` is askd's (`not_found`, `invalid_answer`, ...). */
export class AskdError extends Error {
    code;
    status;
    details;
    name = 'AskdError';
    constructor(code, message, 
    /** The HTTP status; undefined for a WebSocket `error` frame. */
    status, details) {
        super(message);
        this.code = code;
        this.status = status;
        this.details = details;
    }
}
/** askd could not be reached (or answered 5xx) for longer than the retry window. */
export class AskdUnavailable extends Error {
    url;
    lastProblem;
    name = 'AskdUnavailable';
    constructor(url, lastProblem) {
        super(`cannot reach askd at ${url} (${lastProblem})`);
        this.url = url;
        this.lastProblem = lastProblem;
    }
}
/** The inbox was closed before askd replied to a call. */
export class InboxClosed extends Error {
    name = 'InboxClosed';
    constructor() {
        super('the inbox is closed');
    }
}
