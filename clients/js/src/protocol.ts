/* Generated from askd's models by `make js-types` (askd schema, then json-schema-to-typescript). Do not edit. */

/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "Status".
 */
export type Status = "pending" | "answered" | "timeout" | "cancelled" | "declined";
/**
 * Any frame the daemon sends on ``/ws``.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ServerEvent".
 */
export type ServerEvent =
  | AskedEvent
  | CancelledEvent
  | ExtendedEvent
  | EscalatedEvent
  | VotedEvent
  | SnapshotEvent
  | AckEvent
  | ErrorEvent
  | PongEvent;

export interface Askd {
  [k: string]: unknown;
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "AckEvent".
 */
export interface AckEvent {
  id?: string | number | null;
  payload: AckPayload;
  sessionId?: string | null;
  type: "ack";
}
/**
 * One of ``{"accepted", "reason"?}`` (answer, decline), ``{"accepted",
 * "approvals", "needed"}`` or ``{"accepted": false, "reason"}`` (approve), ``{"repushed",
 * "sessionId"}`` (subscribe), ``{"extended", "expiresAt"?, "reason"?}``
 * (extend), ``{}`` (unsubscribe).
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "AckPayload".
 */
export interface AckPayload {
  accepted?: boolean | null;
  /**
   * approve: the approvals it has now.
   */
  approvals?: number | null;
  expiresAt?: string | null;
  extended?: boolean | null;
  /**
   * approve: the approvals it needs.
   */
  needed?: number | null;
  /**
   * Why not: not_pending, not_allowed, already_voted.
   */
  reason?: string | null;
  repushed?: number | null;
  sessionId?: string | null;
  [k: string]: unknown;
}
/**
 * What an agent asks permission to run: ``action`` in an ask.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "Action".
 */
export interface Action {
  /**
   * Offer Approve always beside Approve.
   */
  allowAlways?: boolean;
  /**
   * What it will run with: a JSON object.
   */
  arguments: {
    [k: string]: unknown;
  };
  /**
   * The person may change the arguments before approving.
   */
  editable?: boolean;
  /**
   * What will run (Bash, deploy, mcp__github__merge_pr): 1 to 200 characters, no control character.
   */
  name: string;
  /**
   * What it will change (Markdown: a diff, a command), at most 32 KiB.
   */
  preview?: string | null;
  /**
   * A JSON Schema (draft 2020-12) the arguments must satisfy, as asked and as edited.
   */
  schema?:
    | {
        [k: string]: unknown;
      }
    | boolean
    | null;
  /**
   * Why, in words (Markdown), at most 4,000 characters.
   */
  summary?: string | null;
}
/**
 * ``POST /admin/v1/sessions/{S}/questions/{R}/answer``.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "AnswerBody".
 */
export interface AnswerBody {
  answers: {
    [k: string]: unknown;
  };
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "AnswerFrame".
 */
export interface AnswerFrame {
  answers: {
    [k: string]: unknown;
  };
  id?: string | number | null;
  requestId: string;
  sessionId: string;
  type: "ask_user_questions_result";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ApiError".
 */
export interface ApiError {
  code: string;
  details?: ErrorDetail[] | null;
  message: string;
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ErrorDetail".
 */
export interface ErrorDetail {
  /**
   * The dotted path of the field at fault; empty for the whole request.
   */
  loc: string;
  msg: string;
}
/**
 * One approval of an action (section 17), in the order given.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ApprovalGiven".
 */
export interface ApprovalGiven {
  /**
   * When, RFC 3339 UTC.
   */
  at: string;
  /**
   * Who approved (null: an admin without a sub).
   */
  by: string | null;
  via: "ws" | "link" | "mcp" | "admin";
  [k: string]: unknown;
}
/**
 * ``POST /admin/v1/sessions/{S}/questions/{R}/approve``: one approval,
 * by the admin token's ``sub``.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ApproveBody".
 */
export interface ApproveBody {
  /**
   * Edited arguments (an editable action only).
   */
  arguments?: {
    [k: string]: unknown;
  } | null;
  /**
   * once (default), or always when the action allows it.
   */
  scope?: ("once" | "always") | null;
}
/**
 * The person approves an action (``Registry.prepare_approve``): with
 * edited ``arguments`` when it is editable, ``scope`` ``always`` when it
 * allows that. Denying is ``decline``.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ApproveFrame".
 */
export interface ApproveFrame {
  arguments?: {
    [k: string]: unknown;
  } | null;
  id?: string | number | null;
  requestId: string;
  scope?: ("once" | "always") | null;
  sessionId: string;
  type: "approve";
}
/**
 * ``POST /v1/sessions/{S}/questions``: questions, or an ``action`` to
 * approve (section 17). Validate with a context giving ``max_questions``
 * and ``max_timeout``.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "AskBody".
 */
export interface AskBody {
  /**
   * An action to approve, instead of questions.
   */
  action?: Action | null;
  /**
   * Steps that widen the audience while nobody answers; afterSeconds strictly increasing.
   */
  escalate?:
    | [EscalationStep]
    | [EscalationStep, EscalationStep]
    | [EscalationStep, EscalationStep, EscalationStep]
    | [EscalationStep, EscalationStep, EscalationStep, EscalationStep]
    | [EscalationStep, EscalationStep, EscalationStep, EscalationStep, EscalationStep]
    | null;
  /**
   * A secret of the asking process: only a relay carrying it may answer for the person in its host.
   */
  hostKey?: string | null;
  /**
   * The total time the person may add to the deadline (at most max_timeout_seconds).
   */
  maxExtensionSeconds?: number;
  /**
   * Any JSON object, passed to the user's client untouched.
   */
  metadata?: {
    [k: string]: unknown;
  } | null;
  /**
   * A safe default: on timeout the result carries these answers and defaulted: true.
   */
  onTimeout?: OnTimeout | null;
  parentSessionId?: string | null;
  /**
   * The questions, asked together; each needs a unique 'question' text. Or action.
   */
  questions?: Question[] | null;
  /**
   * Approvals needed from distinct people (action only; default 1).
   */
  quorum?: number | null;
  /**
   * Remind those with no open tab; null: none (default: notify.remind_*).
   */
  remind?: Remind | null;
  requireOnline?: boolean;
  /**
   * Seconds the user has to answer (default: the daemon's, 900).
   */
  timeoutSeconds?: number | null;
  to?:
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string, string, string, string]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | null;
  userId?: string | null;
}
/**
 * When nobody has answered ``afterSeconds`` after the ask, ``to`` joins the question's audience.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "EscalationStep".
 */
export interface EscalationStep {
  /**
   * Seconds after the ask; below the question's timeout.
   */
  afterSeconds: number;
  /**
   * Whom to ask: user ids and group:NAME entries; any of them may answer.
   *
   * @minItems 1
   * @maxItems 20
   */
  to:
    | [string]
    | [string, string]
    | [string, string, string]
    | [string, string, string, string]
    | [string, string, string, string, string]
    | [string, string, string, string, string, string]
    | [string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string, string, string]
    | [string, string, string, string, string, string, string, string, string, string, string, string, string, string]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
    | [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ];
}
/**
 * The answers a question ends with if nobody answers in time.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "OnTimeout".
 */
export interface OnTimeout {
  /**
   * Checked against the questions like an answer.
   */
  answers: {
    [k: string]: unknown;
  };
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "Question".
 */
export interface Question {
  /**
   * A short title shown above the question (plain text).
   */
  header?: string | null;
  /**
   * The user may pick several options; the answer is then a list.
   */
  multiSelect?: boolean;
  /**
   * Choices to offer (none: a free-text question); the user may still type their own.
   */
  options?: Option[] | null;
  /**
   * The question text (Markdown); the answer is keyed by it.
   */
  question: string;
  [k: string]: unknown;
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "Option".
 */
export interface Option {
  /**
   * A line explaining the choice (Markdown).
   */
  description?: string | null;
  /**
   * The choice as the user sees it (plain text), and as the answer gives it back; no control, bidirectional or zero-width character.
   */
  label: string;
  /**
   * Markdown shown beside the choice while it is focused or chosen, e.g. a code block or a ```diff block; at most 100,000 characters.
   */
  preview?: string | null;
  [k: string]: unknown;
}
/**
 * Reminders (section 20): those of the audience with no open tab are notified again.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "Remind".
 */
export interface Remind {
  /**
   * Seconds between reminders, from the ask; at least 60.
   */
  everySeconds: number;
  /**
   * How many reminders at most (1 to 10).
   */
  times: number;
}
/**
 * ``ask_user_questions``: a question for this user, live or re-pushed by a subscribe.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "AskedEvent".
 */
export interface AskedEvent {
  payload: AskedPayload;
  sessionId: string;
  type: "ask_user_questions";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "AskedPayload".
 */
export interface AskedPayload {
  /**
   * An action to approve (instead of questions).
   */
  action?: Action | null;
  /**
   * Approvals given so far (action only).
   */
  approvals?: ApprovalGiven[] | null;
  createdAt: string;
  /**
   * The entries the steps taken added: the tail of to (asked with escalate only).
   */
  escalatedTo?: string[] | null;
  /**
   * Escalation steps taken so far (asked with escalate only).
   */
  escalations?: number | null;
  expiresAt: string;
  /**
   * What is left of that allowance (only when the ask allows some).
   */
  extensionLeftSeconds?: number | null;
  /**
   * The time the person may add in all (only when the ask allows some).
   */
  maxExtensionSeconds?: number | null;
  metadata: {
    [k: string]: unknown;
  };
  /**
   * As the agent sent them, unknown fields included; absent for an action.
   */
  questions?: Question[] | null;
  /**
   * Approvals it needs (action only).
   */
  quorum?: number | null;
  requestId: string;
  /**
   * Whom it is asked of now (users and group:G), for a team question or one with escalation steps; absent: asked of this user alone.
   */
  to?: string[] | null;
  [k: string]: unknown;
}
/**
 * ``ask_user_questions_cancelled``: the question ended.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "CancelledEvent".
 */
export interface CancelledEvent {
  payload: CancelledPayload;
  sessionId: string;
  type: "ask_user_questions_cancelled";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "CancelledPayload".
 */
export interface CancelledPayload {
  /**
   * Who answered or declined (answered, declined); null: an admin without a name.
   */
  answeredBy?: string | null;
  /**
   * For a timeout that took the ask's onTimeout default: the answers it ended with.
   */
  answers?: {
    [k: string]: string | string[];
  } | null;
  /**
   * The reason given with a decline, if any.
   */
  declineReason?: string | null;
  /**
   * true with those answers (timeout only).
   */
  defaulted?: boolean | null;
  /**
   * A delegate answered or declined for this away user (protocol section 20).
   */
  onBehalfOf?: string;
  /**
   * How the question ended: answered, timeout, cancelled, declined, reassigned (no longer yours).
   */
  reason: string;
  requestId: string;
  /**
   * How: ws, link, mcp or admin (answered, declined).
   */
  via?: string | null;
  [k: string]: unknown;
}
/**
 * The person refuses to answer (``Registry.prepare_decline``).
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "DeclineFrame".
 */
export interface DeclineFrame {
  id?: string | number | null;
  reason?: string | null;
  requestId: string;
  sessionId: string;
  type: "decline";
}
/**
 * What became of one notification of a pending question, as the node
 * answering made it (protocol section 6): per channel and recipient, the
 * latest outcome.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "DeliveryStatus".
 */
export interface DeliveryStatus {
  /**
   * When this outcome was recorded, RFC 3339 UTC.
   */
  at: string;
  /**
   * Attempts made; 0 when it failed before any (dropped, or no claim taken).
   */
  attempts: number;
  /**
   * webhook, email or slack.
   */
  channel: string;
  /**
   * Why it failed, or why it is retried: one line, no question text.
   */
  reason?: string | null;
  /**
   * The user it is for, a Slack channel (#C123), or null for the channel's one message or a whole notice.
   */
  recipient: string | null;
  status: "sent" | "failed" | "retrying";
  [k: string]: unknown;
}
/**
 * Every HTTP error: ``{"error": {"code", "message", "details"?}}``.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ErrorBody".
 */
export interface ErrorBody {
  error: ApiError;
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ErrorEvent".
 */
export interface ErrorEvent {
  id?: string | number | null;
  payload: ErrorPayload;
  sessionId?: string | null;
  type: "error";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ErrorPayload".
 */
export interface ErrorPayload {
  code: string;
  details?: ErrorDetail[] | null;
  message: string;
}
/**
 * ``ask_user_questions_escalated``: an escalation step widened the
 * audience of a question this user already has (new members get
 * ``ask_user_questions`` instead).
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "EscalatedEvent".
 */
export interface EscalatedEvent {
  payload: EscalatedPayload;
  sessionId: string;
  type: "ask_user_questions_escalated";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "EscalatedPayload".
 */
export interface EscalatedPayload {
  /**
   * The entries the steps taken added: the tail of to.
   */
  escalatedTo: string[];
  /**
   * Escalation steps taken so far.
   */
  escalations: number;
  requestId: string;
  /**
   * Whom it is asked of now, as in ask_user_questions.
   */
  to: string[];
  [k: string]: unknown;
}
/**
 * ``POST /v1/sessions/{S}/questions/{R}/extend``: the agent moves its
 * own deadline by ``seconds``.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ExtendBody".
 */
export interface ExtendBody {
  seconds: number;
}
/**
 * The person asks for more time (``Registry.prepare_extend``).
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ExtendFrame".
 */
export interface ExtendFrame {
  id?: string | number | null;
  requestId: string;
  seconds: number;
  sessionId: string;
  type: "extend";
}
/**
 * ``ask_user_questions_extended``: the question's deadline moved.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ExtendedEvent".
 */
export interface ExtendedEvent {
  payload: ExtendedPayload;
  sessionId: string;
  type: "ask_user_questions_extended";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "ExtendedPayload".
 */
export interface ExtendedPayload {
  expiresAt: string;
  /**
   * What is left of the person's allowance now (only when the ask allows some).
   */
  extensionLeftSeconds?: number | null;
  /**
   * As in ask_user_questions.
   */
  maxExtensionSeconds?: number | null;
  requestId: string;
  [k: string]: unknown;
}
/**
 * ``GET /v1/me/history``: the last 100 ended questions, newest first.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "HistoryBody".
 */
export interface HistoryBody {
  questions: HistoryEntry[];
}
/**
 * One question that ended with the user in its audience.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "HistoryEntry".
 */
export interface HistoryEntry {
  /**
   * Answered or declined: who did (null otherwise, or an admin without a sub).
   */
  answeredBy: string | null;
  /**
   * Keyed by question text, while askd still keeps the question; else null (the trail holds no texts).
   */
  answers: {
    [k: string]: string | string[];
  } | null;
  /**
   * When it ended, RFC 3339 UTC.
   */
  endedAt: string;
  /**
   * What the person was asked, as plain text: the first question's header, else a summary of its text (its first sentence, Markdown stripped; an action: its summary, else its name), at most 200 characters; kept with the end in the history index. Null for a question asked before askd kept titles.
   */
  header: string | null;
  requestId: string;
  sessionId: string;
  status: Status;
  /**
   * Answered or declined: ws, link, mcp or admin; cancelled: agent or admin; timed out: null.
   */
  via: ("ws" | "link" | "mcp" | "admin" | "agent") | null;
}
/**
 * The ``201`` reply to an ask: the question is pending.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "PendingBody".
 */
export interface PendingBody {
  createdAt: string;
  expiresAt: string;
  requestId: string;
  sessionId: string;
  status: "pending";
}
/**
 * A pending question as listings show it (``GET .../questions``, admin ``pending``).
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "PendingQuestion".
 */
export interface PendingQuestion {
  /**
   * An action to approve, as asked.
   */
  action?: Action | null;
  /**
   * Approvals so far (action only).
   */
  approvals?: ApprovalGiven[] | null;
  createdAt: string;
  /**
   * Admin listing only: its notifications on this node, once one was attempted or failed.
   */
  deliveries?: DeliveryStatus[] | null;
  escalations?: number | null;
  expiresAt: string;
  metadata: {
    [k: string]: unknown;
  };
  /**
   * Absent for an action.
   */
  questions?: Question[] | null;
  /**
   * Approvals needed (action only).
   */
  quorum?: number | null;
  requestId: string;
  sessionId: string;
  /**
   * Whom it is asked of now: user ids and group:NAME entries.
   */
  to: string[];
  /**
   * Only for a question asked of one user.
   */
  userId?: string | null;
  [k: string]: unknown;
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "Ping".
 */
export interface Ping {
  id?: string | number | null;
  type: "ping";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "PongEvent".
 */
export interface PongEvent {
  id?: string | number | null;
  type: "pong";
}
/**
 * A question's state as the agent API reports it (``GET
 * .../questions/{R}``): ``answers`` once answered, ``error`` once it timed
 * out or was cancelled. The MCP tools' output schema is generated from it.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "QuestionResult".
 */
export interface QuestionResult {
  /**
   * Answered or declined: the user who did (null for an admin without a sub).
   */
  answeredBy?: string | null;
  /**
   * Keyed by question text; a list for multiSelect.
   */
  answers?: {
    [k: string]: string | string[];
  } | null;
  /**
   * An action's approvals so far, in order.
   */
  approvals?: ApprovalGiven[] | null;
  /**
   * An ended action: true only when answered (approved).
   */
  approved?: boolean | null;
  /**
   * An ended action: the final arguments, edited or as asked.
   */
  arguments?: {
    [k: string]: unknown;
  } | null;
  /**
   * True: timed out, answers are the ask's onTimeout default.
   */
  defaulted?: boolean | null;
  /**
   * An ended action: the arguments differ from those asked.
   */
  edited?: boolean | null;
  error?: string | null;
  /**
   * Escalation steps taken so far (asked with escalate).
   */
  escalations?: number | null;
  /**
   * While pending: the deadline, as extensions moved it.
   */
  expiresAt?: string | null;
  /**
   * Answered or declined by a delegate of this away user (protocol section 20).
   */
  onBehalfOf?: string;
  /**
   * Declined: the reason the person gave, if any.
   */
  reason?: string | null;
  /**
   * Once ended: a compact JWS (EdDSA) askd signed over the result; check it with /.well-known/jwks.json.
   */
  receipt?: string | null;
  requestId: string;
  /**
   * An approved action: always when every approval chose it, else once.
   */
  scope?: ("once" | "always") | null;
  sessionId: string;
  status: Status;
  /**
   * Answered or declined: how.
   */
  via?: ("ws" | "link" | "mcp" | "admin") | null;
}
/**
 * ``ask_user_questions_voted``: an action got an approval and needs more.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "VotedEvent".
 */
export interface VotedEvent {
  payload: VotedPayload;
  sessionId: string;
  type: "ask_user_questions_voted";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "VotedPayload".
 */
export interface VotedPayload {
  /**
   * The approvals given so far, in order.
   */
  approvals: ApprovalGiven[];
  /**
   * The approvals it needs (its quorum).
   */
  needed: number;
  requestId: string;
}
/**
 * ``session_snapshot``: sent on subscribe, before the re-pushed questions.
 *
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "SnapshotEvent".
 */
export interface SnapshotEvent {
  id?: string | number | null;
  payload: SnapshotPayload;
  sessionId: string;
  type: "session_snapshot";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "SnapshotPayload".
 */
export interface SnapshotPayload {
  active: boolean;
  pending: number;
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "Subscribe".
 */
export interface Subscribe {
  id?: string | number | null;
  sessionId: string;
  type: "subscribe";
}
/**
 * This interface was referenced by `Askd`'s JSON-Schema
 * via the `definition` "Unsubscribe".
 */
export interface Unsubscribe {
  id?: string | number | null;
  sessionId: string;
  type: "unsubscribe";
}
