// askd-client: the user's inbox and the agent's calls, typed from askd's own models.
export { Inbox, TOKEN_ENDED } from './inbox.js';
export { Agent, randomKey } from './agent.js';
export { redeemCode, redeemLocationCode } from './open.js';
export { JWKS_PATH, ReceiptError, ReceiptKeys, approvalContent, questionsContent, receiptDigest, verifyReceipt } from './receipts.js';
export { AskdError, AskdUnavailable, InboxClosed } from './errors.js';
export { Backoff } from './backoff.js';
