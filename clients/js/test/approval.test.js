// The agent's requestApproval (protocol section 17) against a real askd:
// approved with a receipt that verifies for the action, edited arguments,
// a denial, and wait: false with withdraw.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Agent, AskdError, ReceiptKeys, verifyReceipt } from '../dist/index.js';
import { Askd } from './askd.js';

const ACTION = { name: 'deploy', arguments: { service: 'web', env: 'staging' }, summary: 'Ship v2' };
const SCHEMA = { type: 'object', properties: { env: { enum: ['staging', 'production'] } }, required: ['env'] };

let askd;
let agent;
let session = 0;
const newSession = () => `js-approval-${process.pid}-${++session}`;

/** The one pending question of `sid`, once askd holds it. */
async function pendingOf(sid) {
  for (let i = 0; i < 200; i++) {
    const { pending } = await askd.admin('GET', `/admin/v1/pending?sessionId=${sid}`);
    if (pending.length) return pending[0];
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`nothing pending in ${sid}`);
}

describe('requestApproval against askd serve', { timeout: 120_000 }, () => {
  before(async () => {
    askd = await Askd.create();
    await askd.start();
    agent = new Agent({ url: askd.url, token: await askd.token('agent'), pollSeconds: 1 });
  });
  after(() => askd.close());

  test('approved: typed result and a receipt that verifies for the action', async () => {
    const sid = newSession();
    const waiting = agent.requestApproval(sid, { userId: 'alice', action: { ...ACTION, allowAlways: true } });
    const item = await pendingOf(sid);
    assert.equal(item.action.name, 'deploy');
    await askd.admin('POST', `/admin/v1/sessions/${sid}/questions/${item.requestId}/approve`, { scope: 'always' });
    const result = await waiting;
    assert.equal(result.status, 'answered');
    assert.equal(result.approved, true);
    assert.equal(result.scope, 'always');
    assert.equal(result.edited, false);
    assert.deepEqual(result.arguments, ACTION.arguments);
    assert.equal(result.approvals.length, 1);
    const keys = new ReceiptKeys(askd.url);
    const claims = await verifyReceipt(result.receipt, keys, { action: { name: 'deploy', arguments: ACTION.arguments } });
    assert.equal(claims.approved, true);
    // An admin token without a sub is no person: it ends a quorum of 1, and the receipt lists nobody.
    assert.deepEqual([claims.by, claims.via, claims.approvals, claims.approvalsVia], [null, 'admin', [], []]);
  });

  test('an edit comes back as the arguments to run', async () => {
    const sid = newSession();
    const waiting = agent.requestApproval(sid, { userId: 'alice', action: { ...ACTION, schema: SCHEMA, editable: true } });
    const item = await pendingOf(sid);
    const edited = { service: 'web', env: 'production' };
    await askd.admin('POST', `/admin/v1/sessions/${sid}/questions/${item.requestId}/approve`, { arguments: edited });
    const result = await waiting;
    assert.deepEqual([result.approved, result.edited, result.arguments], [true, true, edited]);
  });

  test('a denial is a result with the reason, not approved', async () => {
    const sid = newSession();
    const waiting = agent.requestApproval(sid, { to: ['alice', 'bob'], quorum: 2, action: ACTION });
    const item = await pendingOf(sid);
    assert.equal(item.quorum, 2);
    await askd.admin('POST', `/admin/v1/sessions/${sid}/questions/${item.requestId}/decline`, { reason: 'not today' });
    const result = await waiting;
    assert.deepEqual([result.status, result.approved, result.reason], ['declined', false, 'not today']);
  });

  test('wait: false resolves pending; withdraw ends it; a bad schema is an AskdError', async () => {
    const sid = newSession();
    const pending = await agent.requestApproval(sid, { userId: 'alice', action: ACTION }, { wait: false });
    assert.equal(pending.status, 'pending');
    const withdrawn = await agent.withdraw(sid, pending.requestId);
    assert.deepEqual([withdrawn.status, withdrawn.approved], ['cancelled', false]);
    await assert.rejects(
      agent.requestApproval(newSession(), { userId: 'alice', action: { ...ACTION, schema: { type: 12 } } }),
      (err) => err instanceof AskdError && err.status === 400,
    );
  });
});
