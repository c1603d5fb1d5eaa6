// Compiled (never run) by `npm test`: the published types as an app sees
// them, imported by the package's name. A line marked @ts-expect-error
// must fail to compile, so the types are not just `any`.

import {
  Agent,
  AskdError,
  Inbox,
  redeemCode,
  redeemLocationCode,
  ReceiptError,
  ReceiptKeys,
  verifyReceipt,
  type AskedQuestion,
  type HistoryEntry,
  type OpenedToken,
  type QuestionResult,
  type ReceiptClaims,
  type ReceiptRefusal,
  type ServerEvent,
} from 'askd-client';

const inbox = new Inbox({ url: 'http://127.0.0.1:8765', token: () => 'token' });
inbox.on('asked', (q: AskedQuestion) => {
  const text: string = q.questions[0].question;
  const labels: string[] = (q.questions[0].options ?? []).map((o) => o.label);
  void inbox.answer(q.requestId, { [text]: labels[0] ?? 'free text' }).then((verdict) => {
    if (!verdict.accepted) {
      const reason: string = verdict.reason;
      void reason;
    }
  });
});
inbox.on('closed', (c) => {
  const by: string | null | undefined = c.answeredBy;
  const via: string | undefined = c.via;
  const why: string | undefined = c.declineReason;
  void [by, via, why];
});
inbox.on('extended', (e) => {
  const left: number | undefined = e.extensionLeftSeconds;
  void left;
});
inbox.on('escalated', (e) => {
  const to: string[] = e.to;
  const added: string[] = e.escalatedTo;
  const steps: number = e.escalations;
  void [to, added, steps];
});
// @ts-expect-error: no such event
inbox.on('answered', () => {});
export async function past(): Promise<string[]> {
  const entries: HistoryEntry[] = await inbox.history();
  // @ts-expect-error: via is one of askd's words (or null), not any string
  const via: 'ws' | 'link' | 'mcp' | 'admin' = entries[0].via;
  void via;
  return entries.map((e) => `${e.header ?? e.requestId}: ${e.status} by ${e.answeredBy ?? '-'} via ${e.via ?? '-'} at ${e.endedAt}`);
}
// @ts-expect-error: an answer is a string or a list of strings
void inbox.answer('r', { 'Which?': 3 });

const agent = new Agent({ url: 'http://127.0.0.1:8765', token: 'token' });
export async function ask(): Promise<QuestionResult> {
  try {
    return await agent.ask('session', { userId: 'alice', questions: [{ question: 'Ship?' }], timeoutSeconds: 60 });
  } catch (err) {
    if (err instanceof AskdError) console.log(err.code, err.status);
    throw err;
  }
}
// @ts-expect-error: an ask needs questions
void agent.submit('session', { userId: 'alice' });

export function requestOf(event: ServerEvent): string | undefined {
  return event.type === 'ask_user_questions' ? event.payload.requestId : undefined;
}

export async function signIn(): Promise<Inbox | null> {
  const opened: OpenedToken | null = await redeemLocationCode({ url: 'https://tools.example.com/askd/' });
  if (!opened) return null;
  const who: string = opened.userId;
  void who;
  return new Inbox({ url: 'https://tools.example.com/askd/', token: opened.token });
}
// @ts-expect-error: a code is a string
void redeemCode('http://127.0.0.1:8765', 42);

// An executor's check before it runs the action it was approved for.
export async function checked(receipt: string): Promise<ReceiptClaims | ReceiptRefusal> {
  try {
    const claims = await verifyReceipt(receipt, new ReceiptKeys('http://127.0.0.1:8765'), {
      action: { name: 'deploy', arguments: { env: 'prod' } },
    });
    const approved: boolean | undefined = claims.approved;
    const by: string | null = claims.by;
    void [approved, by];
    return claims;
  } catch (err) {
    if (err instanceof ReceiptError) return err.reason;
    throw err;
  }
}
// @ts-expect-error: an action has arguments
void verifyReceipt('r', { keys: [] }, { action: { name: 'deploy' } });
// @ts-expect-error: no such refusal
export const refusal: ReceiptRefusal = 'expired';

// requestApproval: the body is an ask with `action` (typed from the schema), never `questions`.
const approver = new Agent({ url: 'http://127.0.0.1:8765', token: 'token' });
void approver
  .requestApproval('s1', { userId: 'alice', quorum: 2, action: { name: 'deploy', arguments: { env: 'staging' }, editable: false } })
  .then((r: QuestionResult) => {
    const approved: boolean | null | undefined = r.approved;
    const args: Record<string, unknown> | null | undefined = r.arguments;
    const scope: 'once' | 'always' | null | undefined = r.scope;
    void [approved, args, scope];
  });
// @ts-expect-error an approval has no onTimeout: silence is never consent
void approver.requestApproval('s1', { userId: 'alice', action: { name: 'x', arguments: {} }, onTimeout: { answers: {} } });
// @ts-expect-error the action needs its arguments
void approver.requestApproval('s1', { userId: 'alice', action: { name: 'x' } });
