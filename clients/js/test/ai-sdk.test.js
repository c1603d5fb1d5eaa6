// askd-client/ai-sdk (protocol section 21) against a real askd, with the AI
// SDK's own scripted model (ai/test's MockLanguageModelV4) driving
// generateText: the run pauses on a tool-approval-request, askd asks, a
// person (the admin API, with a name) decides, and the next call of the run
// executes the tool or tells the model why not.

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';

import { generateText, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { generateText as generateTextV6, tool as toolV6 } from 'ai-v6'; // AI SDK 6, the devDependency's alias
import { MockLanguageModelV3 } from 'ai-v6/test';
import { z } from 'zod';

import { Agent } from '../dist/index.js';
import {
  approvalKey,
  approveToolCalls,
  askToolApprovals,
  collectToolApprovals,
  toolApproval,
  toolApprovalMessage,
  uiApprovalResponse,
} from '../dist/ai-sdk.js';
import { Askd } from './askd.js';

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/**
 * A model that calls `calls` (each `[toolName, input]`) on the user's turn,
 * then answers with text once it has the tools' results.
 */
function scriptedModel(calls, Model = MockLanguageModelV4) {
  return new Model({
    doGenerate: async ({ prompt }) => {
      if (prompt.at(-1).role === 'user') {
        const content = calls.map(([toolName, input], i) => ({
          type: 'tool-call',
          toolCallId: `call-${i + 1}`,
          toolName,
          input: JSON.stringify(input),
        }));
        return { content, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: USAGE, warnings: [] };
      }
      return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage: USAGE, warnings: [] };
    },
  });
}

/** The tools of a run, and what each executed. */
function toolsOfRun() {
  const ran = [];
  const tools = {
    deploy: tool({
      description: 'Deploy a service',
      inputSchema: z.object({ service: z.string(), env: z.enum(['staging', 'production']) }),
      execute: async (input) => (ran.push(['deploy', input]), `deployed ${input.service} to ${input.env}`),
    }),
    readLog: tool({
      description: 'Read a log',
      inputSchema: z.object({ service: z.string() }),
      execute: async (input) => (ran.push(['readLog', input]), 'log lines'),
    }),
  };
  return { tools, ran };
}

/** The tool results the model was sent on its last call, by tool call id. */
function toolResultsSeen(model) {
  const prompt = model.doGenerateCalls.at(-1).prompt;
  const results = {};
  for (const m of prompt) {
    if (m.role !== 'tool') continue;
    for (const part of m.content) if (part.type === 'tool-result') results[part.toolCallId] = part.output;
  }
  return results;
}

let askd;
let agent;
let session = 0;
const newSession = () => `js-ai-sdk-${process.pid}-${++session}`;

/** The session's pending questions, once askd holds `n` of them. */
async function pendingOf(sid, n = 1) {
  for (let i = 0; i < 400; i++) {
    const { pending } = await askd.admin('GET', `/admin/v1/pending?sessionId=${sid}`);
    if (pending.length >= n) return pending;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`fewer than ${n} pending in ${sid}`);
}

/** An admin call as a named person (an admin token with a sub), as a tab's decision would be. */
async function decideAs(who, sid, requestId, verb, body = {}) {
  const token = await askd.token('admin', who);
  const response = await fetch(`http://127.0.0.1:${askd.adminPort}/admin/v1/sessions/${sid}/questions/${requestId}/${verb}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, await response.text());
}

/** The first turn of a run: the model calls the tools, the run pauses for approval. */
async function firstTurn(calls, guard = ['deploy']) {
  const model = scriptedModel(calls);
  const { tools, ran } = toolsOfRun();
  const messages = [{ role: 'user', content: 'ship it' }];
  const result = await generateText({ model, tools, toolApproval: toolApproval(guard), messages });
  messages.push(...result.response.messages);
  return { model, tools, ran, messages, result };
}

/** The run's next call, with the responses in a tool message. */
async function resume({ model, tools, messages }, responses) {
  messages.push(toolApprovalMessage(responses));
  return generateText({ model, tools, toolApproval: toolApproval(['deploy']), messages });
}

test('the main entry loads neither ai nor the adapter (ai is an optional peer)', async () => {
  const dist = new URL('../dist/', import.meta.url);
  for (const name of await readdir(dist)) {
    if (!name.endsWith('.js') || name === 'ai-sdk.js') continue;
    const source = await readFile(new URL(name, dist), 'utf8');
    assert.doesNotMatch(source, /from ['"](ai|ai\/[^'"]*|\.\/ai-sdk\.js)['"]/, name);
  }
});

describe('askd-client/ai-sdk with AI SDK 7 against askd serve', { timeout: 180_000 }, () => {
  before(async () => {
    askd = await Askd.create();
    await askd.start();
    agent = new Agent({ url: askd.url, token: await askd.token('agent'), pollSeconds: 1 });
  });
  after(() => askd.close());

  test('toolApproval pauses the guarded tools only', async () => {
    const run = await firstTurn([['deploy', { service: 'web', env: 'staging' }], ['readLog', { service: 'web' }]]);
    const requests = run.result.content.filter((p) => p.type === 'tool-approval-request');
    assert.deepEqual(requests.map((p) => p.toolCall.toolName), ['deploy']);
    assert.deepEqual(run.ran, [['readLog', { service: 'web' }]]);
    assert.equal(toolApproval('all')({ toolCall: { toolName: 'x', toolCallId: 'c', input: {} } }), 'user-approval');
    assert.equal(toolApproval((c) => c.input.env === 'production')({ toolCall: { toolName: 'deploy', toolCallId: 'c', input: { env: 'staging' } } }), undefined);
  });

  test('approved: one approval with the call as its action, a receipt checked, the tool runs', async () => {
    const sid = newSession();
    const run = await firstTurn([['deploy', { service: 'web', env: 'production' }]]);
    const deciding = approveToolCalls(run.result, { agent, session: sid, userId: 'alice', tools: run.tools, agentName: 'release-bot' });
    const [item] = await pendingOf(sid);
    assert.equal(item.action.name, 'deploy');
    assert.deepEqual(item.action.arguments, { service: 'web', env: 'production' });
    assert.equal(item.action.schema.properties.env.enum[1], 'production');
    assert.equal(item.action.editable, false);
    assert.match(item.action.summary, /release-bot.*`deploy`/);
    await decideAs('alice', sid, item.requestId, 'approve');
    const responses = await deciding;
    const approvalId = run.result.content.find((p) => p.type === 'tool-approval-request').approvalId;
    assert.deepEqual(responses, [{ type: 'tool-approval-response', approvalId, approved: true, reason: 'alice approved it' }]);
    const final = await resume(run, responses);
    assert.deepEqual(run.ran, [['deploy', { service: 'web', env: 'production' }]]);
    assert.equal(final.text, 'done');
    assert.deepEqual(toolResultsSeen(run.model)['call-1'], { type: 'text', value: 'deployed web to production' });
  });

  test('denied with a reason: the model is told who denied it and why; the tool does not run', async () => {
    const sid = newSession();
    const run = await firstTurn([['deploy', { service: 'web', env: 'production' }]]);
    const deciding = approveToolCalls(run.messages, { agent, session: sid, to: ['alice', 'bob'] });
    const [item] = await pendingOf(sid);
    await decideAs('bob', sid, item.requestId, 'decline', { reason: 'freeze until Monday' });
    const responses = await deciding;
    assert.deepEqual(
      responses.map((r) => [r.approved, r.reason]),
      [[false, 'bob denied it: freeze until Monday']],
    );
    await resume(run, responses);
    assert.deepEqual(run.ran, []);
    assert.deepEqual(toolResultsSeen(run.model)['call-1'], { type: 'execution-denied', reason: 'bob denied it: freeze until Monday' });
  });

  test('a timeout is a denial that says so (silence is never consent)', async () => {
    const sid = newSession();
    const run = await firstTurn([['deploy', { service: 'web', env: 'staging' }]]);
    const responses = await approveToolCalls(run.result, { agent, session: sid, userId: 'alice', timeoutSeconds: 0.5 });
    assert.deepEqual(
      responses.map((r) => [r.approved, r.reason]),
      [[false, "not approved: Timed out waiting for the user's answer"]],
    );
  });

  test('two calls in one turn: two approvals asked at once, each decided on its own', async () => {
    const sid = newSession();
    const run = await firstTurn([
      ['deploy', { service: 'web', env: 'production' }],
      ['deploy', { service: 'api', env: 'production' }],
    ]);
    const deciding = approveToolCalls(run.result, { agent, session: sid, userId: 'alice', tools: run.tools });
    const items = await pendingOf(sid, 2);
    const byService = Object.fromEntries(items.map((i) => [i.action.arguments.service, i.requestId]));
    await decideAs('alice', sid, byService.api, 'decline', { reason: 'api is mid-migration' });
    await decideAs('alice', sid, byService.web, 'approve');
    const responses = await deciding;
    const ids = run.result.content.filter((p) => p.type === 'tool-approval-request').map((p) => p.approvalId);
    assert.deepEqual(responses.map((r) => [r.approvalId, r.approved]), [[ids[0], true], [ids[1], false]]);
    await resume(run, responses);
    assert.deepEqual(run.ran, [['deploy', { service: 'web', env: 'production' }]]);
    assert.equal(toolResultsSeen(run.model)['call-2'].reason, 'alice denied it: api is mid-migration');
  });

  test('a tampered receipt is refused with a reason; only an explicit option turns the check off', async () => {
    const sid = newSession();
    // Between askd and the adapter, someone rewrites the receipt's claims (who approved).
    const tampering = async (url, init) => {
      const response = await fetch(url, init);
      const body = await response.json();
      if (body.receipt) {
        const [head, payload, signature] = body.receipt.split('.');
        const claims = JSON.parse(Buffer.from(payload, 'base64url'));
        claims.by = 'mallory';
        body.receipt = [head, Buffer.from(JSON.stringify(claims)).toString('base64url'), signature].join('.');
      }
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    };
    const tampered = new Agent({ url: askd.url, token: await askd.token('agent'), pollSeconds: 1, fetch: tampering });
    const run = await firstTurn([['deploy', { service: 'web', env: 'production' }]]);
    const deciding = approveToolCalls(run.result, { agent: tampered, session: sid, userId: 'alice' });
    const [item] = await pendingOf(sid);
    await decideAs('alice', sid, item.requestId, 'approve');
    const [refused] = await deciding;
    assert.equal(refused.approved, false);
    assert.equal(refused.reason, 'not run: askd approved it, but the receipt does not verify (bad signature)');
    await resume(run, [refused]);
    assert.deepEqual(run.ran, []);

    const unchecked = await approveToolCalls(run.result, { agent: tampered, session: sid, userId: 'alice', verifyReceipts: false });
    assert.deepEqual(unchecked.map((r) => r.approved), [true]);
  });

  test("another approval's receipt, for the same call, is refused: the receipt must be this request's", async () => {
    const other = newSession();
    const input = { service: 'web', env: 'production' };
    const asking = agent.requestApproval(other, { userId: 'alice', action: { name: 'deploy', arguments: input } });
    const [first] = await pendingOf(other);
    await decideAs('alice', other, first.requestId, 'approve');
    const { receipt } = await asking;
    const swapping = async (url, init) => {
      const response = await fetch(url, init);
      const body = await response.json();
      if (body.receipt) body.receipt = receipt;
      return new Response(JSON.stringify(body), { status: response.status, headers: response.headers });
    };
    const swapped = new Agent({ url: askd.url, token: await askd.token('agent'), pollSeconds: 1, fetch: swapping });
    const sid = newSession();
    const run = await firstTurn([['deploy', input]]);
    const deciding = approveToolCalls(run.result, { agent: swapped, session: sid, userId: 'alice' });
    const [item] = await pendingOf(sid);
    await decideAs('alice', sid, item.requestId, 'approve');
    const [refused] = await deciding;
    assert.deepEqual(
      [refused.approved, refused.reason],
      [false, `not run: askd approved it, but the receipt is for another request (${other}/${first.requestId})`],
    );
  });

  test('the same call asked twice is one question; a repeat after the decision gets the same decision', async () => {
    const sid = newSession();
    const run = await firstTurn([['deploy', { service: 'web', env: 'staging' }]]);
    const first = await askToolApprovals(run.result, { agent, session: sid, userId: 'alice' });
    const again = await askToolApprovals(run.result, { agent, session: sid, userId: 'alice' });
    assert.equal(first.pending.length, 1);
    assert.equal(again.pending[0].requestId, first.pending[0].requestId);
    assert.equal((await pendingOf(sid)).length, 1);
    const request = run.result.content.find((p) => p.type === 'tool-approval-request');
    assert.match(await approvalKey(sid, { approvalId: request.approvalId, toolCallId: request.toolCall.toolCallId }), /^ai-sdk-[0-9a-f]{64}$/);
    await decideAs('alice', sid, first.pending[0].requestId, 'decline', { reason: 'no' });
    const replayed = await approveToolCalls(run.result, { agent, session: sid, userId: 'alice' });
    assert.deepEqual(replayed.map((r) => r.reason), ['alice denied it: no']);
    const { pending } = await askd.admin('GET', `/admin/v1/pending?sessionId=${sid}`);
    assert.equal(pending.length, 0, 'the repeat asked nothing new');
  });

  test('deferred: ask now, collect later from a fresh client and the saved messages, resume the run', async () => {
    const sid = newSession();
    const run = await firstTurn([['deploy', { service: 'web', env: 'production' }]]);
    const asked = await askToolApprovals(run.messages, { agent, session: sid, userId: 'alice', tools: run.tools });
    assert.deepEqual([asked.responses, asked.pending.map((p) => [p.toolName, p.toolCallId, p.sessionId])], [[], [['deploy', 'call-1', sid]]]);
    const saved = JSON.stringify(run.messages); // the first process keeps its messages and ends

    const later = { url: askd.url, token: await askd.token('agent'), session: sid, userId: 'alice' }; // the ask's options
    const messages = JSON.parse(saved);
    const early = await collectToolApprovals(messages, later);
    assert.deepEqual([early.responses, early.pending.map((p) => p.requestId)], [[], [asked.pending[0].requestId]]);
    const waited = await collectToolApprovals(messages, { ...later, wait: true, timeoutMs: 300 });
    assert.deepEqual(waited.pending.map((p) => p.requestId), [asked.pending[0].requestId], 'still pending when the wait gives up');
    await decideAs('alice', sid, asked.pending[0].requestId, 'approve');
    const collected = await collectToolApprovals(messages, later);
    assert.deepEqual([collected.pending, collected.responses.map((r) => r.approved)], [[], [true]]);

    const { tools, ran } = toolsOfRun();
    messages.push(toolApprovalMessage(collected.responses));
    await generateText({ model: run.model, tools, toolApproval: toolApproval(['deploy']), messages });
    assert.deepEqual(ran, [['deploy', { service: 'web', env: 'production' }]]);
    // Answered now, the request is no longer open in the messages: nothing to collect.
    assert.deepEqual(await collectToolApprovals(messages, later), { responses: [], pending: [] });
  });

  test('AI SDK 6: needsApproval on the tool; its parts and responses are the same', async () => {
    const sid = newSession();
    const model = scriptedModel([['deploy', { service: 'web', env: 'staging' }]], MockLanguageModelV3);
    const ran = [];
    const tools = {
      deploy: toolV6({
        inputSchema: z.object({ service: z.string(), env: z.string() }),
        needsApproval: true,
        execute: async (input) => (ran.push(input), 'deployed'),
      }),
    };
    const messages = [{ role: 'user', content: 'ship it' }];
    const first = await generateTextV6({ model, tools, messages });
    messages.push(...first.response.messages);
    const deciding = approveToolCalls(messages, { agent, session: sid, userId: 'alice', tools });
    const [item] = await pendingOf(sid);
    assert.equal(item.action.schema.type, 'object');
    await decideAs('alice', sid, item.requestId, 'approve');
    messages.push(toolApprovalMessage(await deciding));
    await generateTextV6({ model, tools, messages });
    assert.deepEqual(ran, [{ service: 'web', env: 'staging' }]);
  });

  test("useChat's UI messages: the approval-requested tool parts, answered through addToolApprovalResponse's arguments", async () => {
    const sid = newSession();
    const uiMessages = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'ship it' }] },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'tool-deploy', toolCallId: 'call-7', state: 'approval-requested', input: { service: 'web', env: 'staging' }, approval: { id: 'approval-7', requestReason: `production-like ${'x'.repeat(5000)}` } },
          { type: 'tool-readLog', toolCallId: 'call-8', state: 'output-available', input: { service: 'web' }, output: 'log lines' },
          { type: 'tool-deploy', toolCallId: 'call-9', state: 'approval-requested', input: { service: 'api', env: 'staging' }, approval: { id: 'approval-9', isAutomatic: true } },
        ],
      },
    ];
    const deciding = approveToolCalls(uiMessages, { agent, session: sid, userId: 'alice' });
    const [item] = await pendingOf(sid);
    assert.deepEqual(item.action.arguments, { service: 'web', env: 'staging' });
    assert.match(item.action.summary, /production-like x+…$/); // clipped within askd's 4,000 characters
    await decideAs('alice', sid, item.requestId, 'decline', { reason: 'wait' });
    const responses = await deciding;
    assert.deepEqual(responses.map(uiApprovalResponse), [{ id: 'approval-7', approved: false, reason: 'alice denied it: wait' }]);
  });

  test('inline waits through an askd restart', async () => {
    const sid = newSession();
    const run = await firstTurn([['deploy', { service: 'web', env: 'staging' }]]);
    const deciding = approveToolCalls(run.result, { agent, session: sid, userId: 'alice' });
    const [item] = await pendingOf(sid);
    await askd.stop();
    await askd.start();
    await decideAs('alice', sid, item.requestId, 'approve');
    assert.deepEqual((await deciding).map((r) => r.approved), [true]);
  });
});
