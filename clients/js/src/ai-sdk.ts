// askd as the Vercel AI SDK's approval backend (protocol section 21): the
// subpath `askd-client/ai-sdk`. AI SDK 7 pauses a guarded tool call with a
// `tool-approval-request` part and resumes the run from a
// `tool-approval-response` in the next tool message; this module asks askd
// one approval per request and writes the responses.
//
// It is the only module of the package that imports `ai` (a peer
// dependency): the main entry never loads it.

import { asSchema } from 'ai';
import type { FlexibleSchema, ToolApprovalResponse } from 'ai';

import { Agent, type ApprovalBody } from './agent.js';
import type { Action, PendingBody, QuestionResult } from './protocol.js';
import { ReceiptError, ReceiptKeys, verifyReceipt, type Jwks } from './receipts.js';
import type { TokenSource } from './urls.js';

export type { ToolApprovalResponse };

/** Which tools `toolApproval` sends to askd: their names, every tool (`'all'`), or a test of the call. */
export type ToolGuard = readonly string[] | 'all' | ((toolCall: GuardedToolCall) => boolean);

/** What `toolApproval`'s guard sees of a call. */
export interface GuardedToolCall {
  toolName: string;
  toolCallId: string;
  input: unknown;
  dynamic?: boolean;
}

/**
 * AI SDK 7's `toolApproval` setting (a generic approval function) that
 * pauses the calls of the guarded tools for a person: `'user-approval'`
 * for them, no opinion (`undefined`, "not applicable") for the rest.
 *
 * ```ts
 * generateText({ model, tools, toolApproval: toolApproval(['deploy']), messages })
 * ```
 */
export function toolApproval(guard: ToolGuard = 'all'): (options: { toolCall: GuardedToolCall }) => 'user-approval' | undefined {
  const guarded =
    guard === 'all'
      ? () => true
      : typeof guard === 'function'
        ? guard
        : (call: GuardedToolCall) => guard.includes(call.toolName);
  return ({ toolCall }) => (guarded(toolCall) ? 'user-approval' : undefined);
}

/** A tool as askd reads it: its input schema (a Zod or JSON schema) and its description, when a string. */
export interface ToolLike {
  inputSchema?: unknown;
  description?: unknown;
}

export interface AskdApprovalOptions {
  /** The askd session the approvals are asked in (one per agent run or conversation). */
  session: string;
  /** An `Agent` to ask through; else one made from `url` and `token`. */
  agent?: Agent;
  /** askd's public URL; default `ASKD_URL` (Node). */
  url?: string;
  /** An agent token; default `ASKD_AGENT_TOKEN` (Node). */
  token?: TokenSource;
  /** Whom to ask: one user, or several (`to`). */
  userId?: string;
  to?: string[];
  /** Approvals needed from distinct people (default 1). */
  quorum?: number;
  /** Seconds the person has (default: the daemon's). */
  timeoutSeconds?: number;
  /** Names the agent in each approval's summary (default `"An AI SDK agent"`). */
  agentName?: string;
  /** The run's tools: each guarded tool's JSON Schema and description go with its approval. */
  tools?: Record<string, ToolLike>;
  /**
   * Check each approval's receipt before answering `approved` (protocol
   * section 16): signed by askd's key, for this session and request, and
   * about exactly this tool call. Default true; `false` turns it off.
   */
  verifyReceipts?: boolean;
  /** The keys receipts are checked with: a JWKS held, or `ReceiptKeys`; default askd's, fetched. */
  receiptKeys?: Jwks | ReceiptKeys;
  signal?: AbortSignal;
}

export interface CollectOptions extends AskdApprovalOptions {
  /** Wait for the decisions still pending (default false: report them pending). */
  wait?: boolean;
  /** With `wait`: give up after this long (ms) and report what is still pending. */
  timeoutMs?: number;
}

/** A request askd holds and no one has decided yet. */
export interface PendingToolApproval {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  sessionId: string;
  requestId: string;
  expiresAt?: string | null;
}

/** What a deferred ask or a collect found: the decisions made, and the requests still pending. */
export interface ToolApprovalDecisions {
  responses: ToolApprovalResponse[];
  pending: PendingToolApproval[];
}

/** One `tool-approval-request` and the call it is about. */
export interface ApprovalRequest {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** The reason the approval rule gave (`{type: 'user-approval', reason}`), if any. */
  reason?: string;
}

/**
 * Where the requests are: a `generateText` result or a step (their
 * `content`, awaited for `streamText`'s), or the run's messages (its
 * `response.messages`, or the whole history: requests already answered by
 * a `tool-approval-response` there are skipped), or useChat's UI messages
 * (tool parts in state `approval-requested`).
 */
export type ApprovalSource = { content: readonly unknown[] | PromiseLike<readonly unknown[]> } | readonly unknown[];

/**
 * Inline: ask askd for every open request of `source` (all at once, so the
 * person sees them together), wait for each decision (through dropped
 * links and askd restarts), and return the `tool-approval-response` parts,
 * in the requests' order, for the next tool message.
 */
export async function approveToolCalls(source: ApprovalSource, options: AskdApprovalOptions): Promise<ToolApprovalResponse[]> {
  const { responses, pending } = await decideAll(source, options, 'wait');
  if (pending.length) throw new Error('askd: a decision was still pending after waiting for it'); // wait never returns pending
  return responses;
}

/**
 * Deferred: ask askd for every open request of `source` and return at
 * once. Decisions already made (a repeat of an ask that ended) come back
 * as responses; the rest are `pending`, for `collectToolApprovals` later,
 * in this process or another.
 */
export async function askToolApprovals(source: ApprovalSource, options: AskdApprovalOptions): Promise<ToolApprovalDecisions> {
  return decideAll(source, options, 'ask');
}

/**
 * Deferred, later: the decisions of `source`'s open requests. Each is found
 * by the ask's Idempotency-Key (its session, tool call and approval ids),
 * so the same messages collect from any process: a request asked before
 * is never asked twice while askd keeps it. Still pending: waits with
 * `wait`, else reports it in `pending`.
 */
export async function collectToolApprovals(source: ApprovalSource, options: CollectOptions): Promise<ToolApprovalDecisions> {
  return decideAll(source, options, options.wait ? 'wait' : 'ask');
}

/** The tool message that carries the responses to the next call of the run. */
export function toolApprovalMessage(responses: ToolApprovalResponse[]): { role: 'tool'; content: ToolApprovalResponse[] } {
  return { role: 'tool', content: responses };
}

/** The open (not automatic, not yet answered) `tool-approval-request`s of `source`. */
export async function approvalRequests(source: ApprovalSource): Promise<ApprovalRequest[]> {
  if (isArray(source)) return requestsOfMessages(source);
  const content = await source.content;
  const found: ApprovalRequest[] = [];
  for (const part of content) {
    if (!isObject(part) || part.type !== 'tool-approval-request' || part.isAutomatic === true) continue;
    const call = part.toolCall;
    if (!isObject(call) || typeof part.approvalId !== 'string') continue;
    found.push(request(part, String(call.toolCallId), String(call.toolName), call.input));
  }
  return found;
}

/**
 * The Idempotency-Key of a request's ask: a digest of the session and the
 * framework's ids of the call and of its approval, so a process that dies
 * and asks again gets the same question (protocol section 21).
 */
export async function approvalKey(session: string, request: Pick<ApprovalRequest, 'toolCallId' | 'approvalId'>): Promise<string> {
  const text = JSON.stringify(['ai-sdk', session, request.toolCallId, request.approvalId]);
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return `ai-sdk-${Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')}`;
}

// ---- one decision -----------------------------------------------------------

type Mode = 'ask' | 'wait';

async function decideAll(source: ApprovalSource, options: CollectOptions, mode: Mode): Promise<ToolApprovalDecisions> {
  const requests = await approvalRequests(source);
  const agent = options.agent ?? agentFromOptions(options);
  const keys = options.receiptKeys ?? new ReceiptKeys(agent.url);
  const outcomes = await Promise.all(requests.map((r) => decide(r, agent, keys, options, mode)));
  const decisions: ToolApprovalDecisions = { responses: [], pending: [] };
  for (const outcome of outcomes) {
    if ('type' in outcome) decisions.responses.push(outcome);
    else decisions.pending.push(outcome);
  }
  return decisions;
}

async function decide(
  req: ApprovalRequest,
  agent: Agent,
  keys: Jwks | ReceiptKeys,
  options: CollectOptions,
  mode: Mode,
): Promise<ToolApprovalResponse | PendingToolApproval> {
  const body = await approvalBody(req, options);
  const call = { idempotencyKey: await approvalKey(options.session, req), signal: options.signal };
  let result: PendingBody | QuestionResult = await agent.requestApproval(options.session, body, { ...call, wait: false });
  if (result.status === 'pending' && mode === 'wait') {
    result = await agent.wait(options.session, result.requestId, { signal: options.signal, timeoutMs: options.timeoutMs });
  }
  if (result.status === 'pending') {
    const { requestId, expiresAt } = result as PendingBody;
    return { approvalId: req.approvalId, toolCallId: req.toolCallId, toolName: req.toolName, sessionId: options.session, requestId, expiresAt };
  }
  return respond(req, result as QuestionResult, body.action, keys, options);
}

async function approvalBody(req: ApprovalRequest, options: AskdApprovalOptions): Promise<ApprovalBody> {
  if (!isObject(req.input)) {
    throw new TypeError(`askd: the input of tool call ${req.toolCallId} (${req.toolName}) is not a JSON object; askd approves object arguments only`);
  }
  const tool = options.tools?.[req.toolName];
  // Each part clipped, so the summary stays within askd's 4,000 characters (protocol section 17).
  const lines = [`**${clip(options.agentName ?? 'An AI SDK agent', 200)}** asks to run the tool \`${req.toolName}\`.`];
  if (typeof tool?.description === 'string' && tool.description) lines.push(`The tool: ${clip(tool.description, 1500)}`);
  if (req.reason) lines.push(`Why it needs approval: ${clip(req.reason, 1500)}`);
  const action: Action = {
    name: req.toolName,
    arguments: req.input,
    summary: lines.join('\n\n'),
    // AI SDK 7 runs a call only with the input it was asked with (an
    // approval carries no new input), so askd offers no edit.
    editable: false,
  };
  const schema = tool?.inputSchema === undefined ? undefined : await asSchema(tool.inputSchema as FlexibleSchema<unknown>).jsonSchema;
  if (schema !== undefined) action.schema = schema as Record<string, unknown>;
  const body: ApprovalBody = { action };
  if (options.userId !== undefined) body.userId = options.userId;
  if (options.to !== undefined) body.to = options.to as ApprovalBody['to'];
  if (options.quorum !== undefined) body.quorum = options.quorum;
  if (options.timeoutSeconds !== undefined) body.timeoutSeconds = options.timeoutSeconds;
  body.metadata = { framework: 'ai-sdk', toolCallId: req.toolCallId, approvalId: req.approvalId };
  return body;
}

/** The response for an ended approval: approved only with a receipt that holds for exactly this call. */
async function respond(
  req: ApprovalRequest,
  result: QuestionResult,
  action: Action,
  keys: Jwks | ReceiptKeys,
  options: AskdApprovalOptions,
): Promise<ToolApprovalResponse> {
  const deny = (reason: string): ToolApprovalResponse => ({ type: 'tool-approval-response', approvalId: req.approvalId, approved: false, reason });
  if (result.status === 'declined') {
    return deny(`${result.answeredBy ?? 'someone'} denied it: ${result.reason || 'no reason given'}`);
  }
  if (result.status !== 'answered' || result.approved !== true) {
    // Silence is never consent: a timeout, a withdrawal or a cancelled session is a denial.
    return deny(`not approved: ${result.error || result.status}`);
  }
  if (options.verifyReceipts !== false) {
    const refused = await receiptRefusal(result, action, keys, options.signal);
    if (refused) return deny(`not run: askd approved it, but ${refused}`);
  }
  return { type: 'tool-approval-response', approvalId: req.approvalId, approved: true, reason: `${result.answeredBy ?? 'someone'} approved it` };
}

/** Why the result's receipt does not prove this approval, or null when it does. */
async function receiptRefusal(result: QuestionResult, action: Action, keys: Jwks | ReceiptKeys, signal?: AbortSignal): Promise<string | null> {
  if (!result.receipt) return 'its result carries no receipt';
  try {
    const claims = await verifyReceipt(result.receipt, keys, { action: { name: action.name, arguments: action.arguments }, signal });
    if (claims.sid !== result.sessionId || claims.rid !== result.requestId) {
      return `the receipt is for another request (${claims.sid}/${claims.rid})`;
    }
    return null;
  } catch (err) {
    if (err instanceof ReceiptError) return `the receipt does not verify (${err.message})`;
    throw err;
  }
}

// ---- finding the requests ---------------------------------------------------

function requestsOfMessages(messages: readonly unknown[]): ApprovalRequest[] {
  const calls = new Map<string, { toolName: string; input: unknown }>();
  const answered = new Set<string>();
  const asked: Record<string, unknown>[] = [];
  const found: ApprovalRequest[] = [];
  for (const message of messages) {
    if (isObject(message) && Array.isArray(message.parts)) {
      found.push(...requestsOfUiMessage(message.parts));
      continue;
    }
    if (!isObject(message) || !Array.isArray(message.content)) continue;
    for (const part of message.content) {
      if (!isObject(part)) continue;
      if (part.type === 'tool-call' && typeof part.toolCallId === 'string') {
        calls.set(part.toolCallId, { toolName: String(part.toolName), input: part.input });
      } else if (part.type === 'tool-approval-request' && part.isAutomatic !== true) {
        asked.push(part);
      } else if (part.type === 'tool-approval-response' && typeof part.approvalId === 'string') {
        answered.add(part.approvalId);
      }
    }
  }
  for (const part of asked) {
    const approvalId = part.approvalId;
    const toolCallId = part.toolCallId;
    if (typeof approvalId !== 'string' || typeof toolCallId !== 'string' || answered.has(approvalId)) continue;
    const call = calls.get(toolCallId);
    if (!call) throw new TypeError(`askd: approval ${approvalId} names tool call ${toolCallId}, which the messages do not hold`);
    found.push(request(part, toolCallId, call.toolName, call.input));
  }
  return found;
}

/**
 * A UI message's (useChat's) tool parts waiting for a decision: `state`
 * `approval-requested`, the approval's id in `approval.id`; the tool's name
 * is the part's type after `tool-` (or `toolName` of a `dynamic-tool`).
 */
function requestsOfUiMessage(parts: unknown[]): ApprovalRequest[] {
  const found: ApprovalRequest[] = [];
  for (const part of parts) {
    if (!isObject(part) || part.state !== 'approval-requested' || !isObject(part.approval)) continue;
    if (part.approval.isAutomatic === true || typeof part.approval.id !== 'string' || typeof part.toolCallId !== 'string') continue;
    const type = String(part.type);
    const toolName = type === 'dynamic-tool' ? String(part.toolName) : type.startsWith('tool-') ? type.slice('tool-'.length) : null;
    if (toolName === null) continue;
    const reason = part.approval.requestReason;
    found.push(request({ approvalId: part.approval.id, reason }, part.toolCallId, toolName, part.input));
  }
  return found;
}

/** The arguments of useChat's `addToolApprovalResponse` for a response. */
export function uiApprovalResponse(response: ToolApprovalResponse): { id: string; approved: boolean; reason?: string } {
  const args: { id: string; approved: boolean; reason?: string } = { id: response.approvalId, approved: response.approved };
  if (response.reason !== undefined) args.reason = response.reason;
  return args;
}

function request(part: Record<string, unknown>, toolCallId: string, toolName: string, input: unknown): ApprovalRequest {
  const found: ApprovalRequest = { approvalId: String(part.approvalId), toolCallId, toolName, input };
  if (typeof part.reason === 'string' && part.reason) found.reason = part.reason;
  return found;
}

function agentFromOptions({ url, token }: AskdApprovalOptions): Agent {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
  const found = url ?? env.ASKD_URL;
  const agentToken = token ?? env.ASKD_AGENT_TOKEN;
  if (!found || !agentToken) {
    throw new TypeError('askd: give `agent`, or `url` and `token` (or set ASKD_URL and ASKD_AGENT_TOKEN)');
  }
  return new Agent({ url: found, token: agentToken });
}

function clip(text: string, most: number): string {
  return text.length <= most ? text : `${text.slice(0, most - 1)}…`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value);
}
