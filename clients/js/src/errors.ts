// What the client throws: one class for every refusal askd explains (an
// HTTP error body or a WebSocket `error` frame), one for giving up on a
// daemon that does not answer at all.

import type { ErrorDetail } from './protocol.js';

/** askd refused a call: `code` is askd's (`not_found`, `invalid_answer`, ...). */
export class AskdError extends Error {
  override readonly name: string = 'AskdError';
  constructor(
    readonly code: string,
    message: string,
    /** The HTTP status; undefined for a WebSocket `error` frame. */
    readonly status?: number,
    readonly details?: ErrorDetail[] | null,
  ) {
    super(message);
  }
}

/** askd could not be reached (or answered 5xx) for longer than the retry window. */
export class AskdUnavailable extends Error {
  override readonly name: string = 'AskdUnavailable';
  constructor(
    readonly url: string,
    readonly lastProblem: string,
  ) {
    super(`cannot reach askd at ${url} (${lastProblem})`);
  }
}

/** The inbox was closed before askd replied to a call. */
export class InboxClosed extends Error {
  override readonly name: string = 'InboxClosed';
  constructor() {
    super('the inbox is closed');
  }
}
