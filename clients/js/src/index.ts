// askd-client: the user's inbox and the agent's calls, typed from askd's own models.

export { Inbox, TOKEN_ENDED } from './inbox.js';
export type {
  AnswerVerdict,
  ApproveVerdict,
  AskedQuestion,
  ClosedQuestion,
  CloseReason,
  ConnectionState,
  EscalatedQuestion,
  ExtendedQuestion,
  ExtendVerdict,
  InboxEvents,
  InboxOptions,
  VotedQuestion,
} from './inbox.js';
export { Agent, randomKey } from './agent.js';
export type { AgentOptions, ApprovalBody, ApprovalOptions, AskOptions, CallOptions, QuestionsBody, WaitOptions } from './agent.js';
export { redeemCode, redeemLocationCode } from './open.js';
export type { LocationCodeOptions, OpenedToken, RedeemOptions } from './open.js';
export { JWKS_PATH, ReceiptError, ReceiptKeys, approvalContent, questionsContent, receiptDigest, verifyReceipt } from './receipts.js';
export type {
  Jwk,
  Jwks,
  ReceiptAction,
  ReceiptClaims,
  ReceiptKeysOptions,
  ReceiptRefusal,
  VerifyReceiptOptions,
} from './receipts.js';
export { AskdError, AskdUnavailable, InboxClosed } from './errors.js';
export { Backoff } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
export type { SocketLike, WebSocketClass } from './socket.js';
export type { TokenSource } from './urls.js';
export type * from './protocol.js';
