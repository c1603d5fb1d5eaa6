// The inbox and the agent against a real askd over real sockets.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Agent, AskdError, AskdUnavailable, Inbox } from '../dist/index.js';
import { Askd, next, nextState } from './askd.js';

const QUESTION = { question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] };
const FAST = { base: 50, cap: 200 }; // reconnect quickly: these tests cut links on purpose

let askd;
let agent;
let session = 0;
const newSession = () => `js-${process.pid}-${++session}`;

async function inbox(user = 'alice', options = {}) {
  const box = new Inbox({ url: askd.url, token: await askd.token('user', user), backoff: FAST, ...options });
  box.start();
  await box.ready();
  return box;
}

/** Ask `user` one QUESTION in a new session; resolves once `tab` shows it. */
async function askAndShow(tab, user = 'alice') {
  const sid = newSession();
  const shown = next(tab, 'asked', (q) => q.sessionId === sid);
  const pending = await agent.submit(sid, { userId: user, questions: [QUESTION] });
  assert.equal(pending.status, 'pending');
  assert.equal((await shown).requestId, pending.requestId);
  return { sid, pending };
}

async function stats() {
  return askd.admin('GET', '/admin/v1/stats');
}

describe('against askd serve', { timeout: 120_000 }, () => {
  before(async () => {
    askd = await Askd.create();
    await askd.start();
    agent = new Agent({ url: askd.url, token: await askd.token('agent') });
  });
  after(() => askd.close());

  test('pushed, link cut, re-pushed once and shown once, answered; the agent gets the answer', async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    const asked = [];
    tab.on('asked', (q) => asked.push(q));
    const { sid, pending } = await askAndShow(tab);
    const waiting = agent.wait(sid, pending.requestId);

    const repushedBefore = (await stats()).repushed;
    const back = nextState(tab, 'connected');
    assert.equal((await askd.admin('POST', '/admin/v1/disconnect', { userId: 'alice' })).disconnected, 1);
    await back;
    assert.equal((await stats()).repushed, repushedBefore + 1, 'the re-subscribe re-pushed the question');
    assert.deepEqual(asked.map((q) => q.requestId), [pending.requestId], 'shown once');
    assert.deepEqual(asked[0].questions, [QUESTION]);
    assert.equal(asked[0].sessionId, sid);

    const closed = next(tab, 'closed');
    assert.deepEqual(await tab.answer(pending.requestId, { 'Which database?': 'SQLite' }), { accepted: true });
    assert.equal((await closed).reason, 'answered');
    const result = await waiting;
    assert.equal(result.status, 'answered');
    assert.deepEqual(result.answers, { 'Which database?': 'SQLite' });
    assert.deepEqual(tab.questions, []);
  });

  test('an answer given while the link is down is sent after the reconnect and taken once', async (t) => {
    // carol's only connection, until the other tab opens: the one to cut.
    const tab = await inbox('carol');
    const { connections } = await askd.admin('GET', '/admin/v1/connections?userId=carol');
    assert.equal(connections.length, 1);
    const other = await inbox('carol');
    t.after(() => (tab.close(), other.close()));
    const { sid, pending } = await askAndShow(tab, 'carol');
    const answeredBefore = (await stats()).answered;
    const otherClosed = [];
    other.on('closed', (c) => otherClosed.push(c));

    // Answer in the moment the link is known down: nothing can carry it until the reconnect.
    const verdict = new Promise((resolve, reject) => {
      const off = tab.on('state', (s) => {
        if (s.state !== 'waiting') return;
        off();
        tab.answer(pending.requestId, { 'Which database?': 'PostgreSQL' }).then(resolve, reject);
      });
    });
    await askd.admin('POST', '/admin/v1/disconnect', { connectionId: connections[0].connectionId });
    assert.deepEqual(await verdict, { accepted: true });

    const result = await agent.result(sid, pending.requestId);
    assert.equal(result.status, 'answered');
    assert.deepEqual(result.answers, { 'Which database?': 'PostgreSQL' });
    assert.equal((await stats()).answered, answeredBefore + 1);
    await until(() => otherClosed.length === 1);
    assert.equal(otherClosed[0].reason, 'answered');
  });

  test("another tab's answer closes the question here", async (t) => {
    const here = await inbox();
    const there = await inbox();
    t.after(() => (here.close(), there.close()));
    const sid = newSession();
    const shownHere = next(here, 'asked');
    const shownThere = next(there, 'asked');
    const pending = await agent.submit(sid, { userId: 'alice', questions: [QUESTION] });
    await Promise.all([shownHere, shownThere]);

    const closed = next(here, 'closed');
    assert.deepEqual(await there.answer(pending.requestId, { 'Which database?': 'SQLite' }), { accepted: true });
    const event = await closed;
    assert.equal(event.reason, 'answered');
    assert.equal(event.requestId, pending.requestId);
    // askd 1.2 names who answered; a daemon that does not leaves it out.
    if (event.answeredBy !== undefined) assert.equal(event.answeredBy, 'alice');
    assert.deepEqual(await here.answer(pending.requestId, { 'Which database?': 'PostgreSQL' }, { sessionId: sid }), {
      accepted: false,
      reason: 'not_pending',
    });
  });

  test('a question that ended while the inbox was paused closes as ended on resume', async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    const { sid, pending } = await askAndShow(tab);
    tab.pause();
    assert.equal(tab.state.state, 'paused');
    assert.equal((await agent.withdraw(sid, pending.requestId)).status, 'cancelled');
    const closed = next(tab, 'closed');
    tab.resume();
    assert.deepEqual(await closed, { sessionId: sid, requestId: pending.requestId, reason: 'ended' });
  });

  test('withdraw closes the question in the inbox as cancelled', async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    const { sid, pending } = await askAndShow(tab);
    const closed = next(tab, 'closed');
    const result = await agent.withdraw(sid, pending.requestId);
    assert.equal(result.status, 'cancelled');
    assert.equal(result.error, 'Withdrawn by agent');
    assert.equal((await closed).reason, 'cancelled');
  });

  test('invalid answers reject with askd\'s invalid_answer and leave the question pending', async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    const { sid, pending } = await askAndShow(tab);
    await assert.rejects(tab.answer(pending.requestId, { 'No such question?': 'x' }), (err) => err instanceof AskdError && err.code === 'invalid_answer');
    assert.equal((await agent.result(sid, pending.requestId)).status, 'pending');
    await agent.withdraw(sid, pending.requestId);
  });

  test('extend and decline: the allowance, the agent\'s own extension, a decline with its reason', async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    const { sid, pending } = await askAndShow(tab);
    // Asked without maxExtensionSeconds: the person may add nothing.
    assert.deepEqual(await tab.extend(pending.requestId, 60), { extended: false, reason: 'not_allowed' });
    // The agent may, and every tab hears of it.
    const moved = next(tab, 'extended', (e) => e.requestId === pending.requestId);
    const extended = await agent.extend(sid, pending.requestId, 60);
    assert.equal(extended.status, 'pending');
    assert.equal(Date.parse(extended.expiresAt) - Date.parse(pending.expiresAt), 60_000);
    assert.equal((await moved).expiresAt, extended.expiresAt);

    const closed = next(tab, 'closed');
    assert.deepEqual(await tab.decline(pending.requestId, 'not mine to decide'), { accepted: true });
    assert.deepEqual(await closed, {
      sessionId: sid,
      requestId: pending.requestId,
      reason: 'declined',
      answeredBy: 'alice',
      via: 'ws',
      declineReason: 'not mine to decide',
    });
    const result = await agent.result(sid, pending.requestId);
    assert.deepEqual(
      [result.status, result.reason, result.answeredBy, result.via],
      ['declined', 'not mine to decide', 'alice', 'ws'],
    );
    assert.deepEqual(await tab.decline(pending.requestId, undefined, { sessionId: sid }), { accepted: false, reason: 'not_pending' });
  });

  test('the person extends up to the question\'s allowance', async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    const sid = newSession();
    const shown = next(tab, 'asked', (q) => q.sessionId === sid);
    const pending = await agent.submit(sid, { userId: 'alice', questions: [QUESTION], maxExtensionSeconds: 30 });
    const asked = await shown;
    assert.deepEqual([asked.payload.maxExtensionSeconds, asked.payload.extensionLeftSeconds], [30, 30]);
    const moved = next(tab, 'extended', (e) => e.requestId === pending.requestId);
    const verdict = await tab.extend(pending.requestId, 60);
    assert.equal(verdict.extended, true);
    assert.equal(Date.parse(verdict.expiresAt) - Date.parse(pending.expiresAt), 30_000);
    assert.deepEqual(await moved, { sessionId: sid, requestId: pending.requestId, expiresAt: verdict.expiresAt, extensionLeftSeconds: 0 });
    assert.equal(tab.questions[0].payload.extensionLeftSeconds, 0, 'the kept payload follows');
    assert.deepEqual(await tab.extend(pending.requestId, 1), { extended: false, reason: 'not_allowed' });
    await agent.withdraw(sid, pending.requestId);
  });

  test('more time given while the link was down is told on the re-push', async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    const sid = newSession();
    const shown = next(tab, 'asked', (q) => q.sessionId === sid);
    const pending = await agent.submit(sid, { userId: 'alice', questions: [QUESTION], maxExtensionSeconds: 30 });
    await shown;
    tab.pause();
    const extended = await agent.extend(sid, pending.requestId, 60); // the agent's: the allowance stays whole
    const moved = next(tab, 'extended');
    tab.resume();
    assert.deepEqual(await moved, { sessionId: sid, requestId: pending.requestId, expiresAt: extended.expiresAt, extensionLeftSeconds: 30 });
    assert.equal(tab.questions[0].expiresAt, extended.expiresAt);
    await agent.withdraw(sid, pending.requestId);
  });

  test('an escalation step is told to the tabs that had the question; a close names who declined and why', async (t) => {
    await askd.admin('PUT', '/admin/v1/groups/js-oncall', { members: ['dave'] });
    await askd.admin('PUT', '/admin/v1/groups/js-leads', { members: ['erin'] });
    const dave = await inbox('dave');
    const erin = await inbox('erin');
    t.after(() => (dave.close(), erin.close()));
    const sid = newSession();
    const shown = next(dave, 'asked', (q) => q.sessionId === sid);
    const pending = await agent.submit(sid, {
      to: ['group:js-oncall'],
      questions: [QUESTION],
      timeoutSeconds: 30,
      escalate: [{ afterSeconds: 0.3, to: ['group:js-leads'] }],
    });
    const asked = await shown;
    assert.deepEqual([asked.payload.to, asked.payload.escalations, asked.payload.escalatedTo], [['group:js-oncall'], 0, []]);

    const escalated = next(dave, 'escalated');
    const reached = next(erin, 'asked', (q) => q.sessionId === sid);
    const to = ['group:js-oncall', 'group:js-leads'];
    assert.deepEqual(await escalated, { sessionId: sid, requestId: pending.requestId, to, escalatedTo: ['group:js-leads'], escalations: 1 });
    assert.deepEqual(dave.questions[0].payload.to, to, 'the kept payload follows');
    const late = (await reached).payload;
    assert.deepEqual([late.to, late.escalations, late.escalatedTo], [to, 1, ['group:js-leads']]);

    const closed = next(dave, 'closed');
    assert.deepEqual(await erin.decline(pending.requestId, 'not tonight'), { accepted: true });
    assert.deepEqual(await closed, {
      sessionId: sid,
      requestId: pending.requestId,
      reason: 'declined',
      answeredBy: 'erin',
      via: 'ws',
      declineReason: 'not tonight',
    });
  });

  test('history: what ended with the user in its audience, newest first, typed from askd schema', async (t) => {
    const tab = await inbox('hana'); // hana's own: other tests ask alice
    t.after(() => tab.close());
    const { sid: first, pending: answered } = await askAndShow(tab, 'hana');
    assert.deepEqual(await tab.answer(answered.requestId, { 'Which database?': 'SQLite' }), { accepted: true });
    const { sid: second, pending: declined } = await askAndShow(tab, 'hana');
    assert.deepEqual(await tab.decline(declined.requestId, 'not mine'), { accepted: true });
    const history = await tab.history();
    assert.deepEqual(
      history.map((e) => [e.sessionId, e.requestId, e.status, e.answeredBy, e.via, e.answers]),
      [
        [second, declined.requestId, 'declined', 'hana', 'ws', null],
        [first, answered.requestId, 'answered', 'hana', 'ws', { 'Which database?': 'SQLite' }],
      ],
    );
    assert.ok(history.every((e) => !Number.isNaN(Date.parse(e.endedAt))));
    // One HTTP call: an inbox that never started (nor connected) may ask too; another user's past is not in it.
    const other = new Inbox({ url: askd.url, token: await askd.token('user', 'ivan') });
    assert.deepEqual(await other.history(), []);
  });

  test('history refused: AskdError with askd\'s code; an unreachable askd is AskdUnavailable', async () => {
    const agentToken = new Inbox({ url: askd.url, token: await askd.token('agent') });
    await assert.rejects(agentToken.history(), (err) => err instanceof AskdError && err.status === 403 && err.code === 'forbidden');
    const nowhere = new Inbox({ url: 'http://127.0.0.1:9/', token: 'x' });
    await assert.rejects(nowhere.history(), (err) => err instanceof AskdUnavailable);
  });

  test('a refused token stops the inbox as rejected', async () => {
    const tab = new Inbox({ url: askd.url, token: 'not-a-token', backoff: FAST });
    const rejected = nextState(tab, 'rejected');
    tab.start();
    const { error } = await rejected;
    assert.equal(error.status, 401);
    await assert.rejects(tab.ready(), (err) => err.status === 401);
    tab.close();
  });

  test('a token that expires on an open link stops the inbox as rejected (token_ended)', async () => {
    const tab = new Inbox({ url: askd.url, token: await askd.issue('--role', 'user', '--sub', 'erin', '--ttl', '2'), backoff: FAST });
    tab.start();
    await tab.ready();
    const { error } = await nextState(tab, 'rejected', 8000); // askd closes the socket with 4001 at exp
    assert.equal(error.code, 'token_ended');
    assert.equal((await askd.admin('GET', '/admin/v1/connections?userId=erin')).connections.length, 0, 'and does not reconnect');
    tab.close();
  });

  test('a refused subscribe is a refused event, and the inbox stays connected', async (t) => {
    const tab = new Inbox({ url: askd.url, token: await askd.token('user', 'alice'), backoff: FAST, sessionId: 'x'.repeat(300) });
    t.after(() => tab.close());
    const refused = next(tab, 'refused');
    const errors = [];
    tab.on('error', (err) => errors.push(err));
    tab.start();
    assert.ok((await refused) instanceof AskdError);
    await tab.ready();
    assert.deepEqual(errors, []);
  });

  test('ask waits for the answer and returns the result', async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    tab.on('asked', (q) => void tab.answer(q.requestId, { 'Which database?': ['SQLite'] }).catch(() => {}));
    const result = await agent.ask(newSession(), {
      userId: 'alice',
      questions: [{ ...QUESTION, multiSelect: true }],
    });
    assert.equal(result.status, 'answered');
    assert.deepEqual(result.answers, { 'Which database?': ['SQLite'] });
  });

  test("a timeout that took the ask's default says which answers stood; a plain one says none", async (t) => {
    const tab = await inbox();
    t.after(() => tab.close());
    const sid = newSession();
    const defaulted = next(tab, 'closed', (c) => c.sessionId === sid);
    await agent.submit(sid, { userId: 'alice', questions: [QUESTION], timeoutSeconds: 0.3, onTimeout: { answers: { 'Which database?': 'SQLite' } } });
    const closed = await defaulted;
    assert.equal(closed.reason, 'timeout');
    assert.deepEqual([closed.answers, closed.defaulted], [{ 'Which database?': 'SQLite' }, true]);

    const plainSid = newSession();
    const plain = next(tab, 'closed', (c) => c.sessionId === plainSid);
    await agent.submit(plainSid, { userId: 'alice', questions: [QUESTION], timeoutSeconds: 0.3 });
    const ended = await plain;
    assert.equal(ended.reason, 'timeout');
    assert.ok(!('answers' in ended) && !('defaulted' in ended));
  });
});

test("the agent's wait rides a restart of askd (SQLite store)", { timeout: 60_000 }, async (t) => {
  const service = await Askd.create('--store', 'sqlite');
  t.after(() => service.close());
  await service.start();
  const waiter = new Agent({ url: service.url, token: await service.token('agent'), pollSeconds: 5, backoff: { base: 100, cap: 500 } });
  const sid = newSession();
  const pending = await waiter.submit(sid, { userId: 'bob', questions: [QUESTION] });
  let settled = false;
  const waiting = waiter.wait(sid, pending.requestId).finally(() => (settled = true));

  assert.equal(await service.stop(), 0);
  await service.start();
  assert.equal(settled, false, 'the wait outlived the daemon it started on');
  const answered = await service.admin('POST', `/admin/v1/sessions/${sid}/questions/${pending.requestId}/answer`, {
    answers: { 'Which database?': 'SQLite' },
  });
  assert.deepEqual(answered, { accepted: true });
  const result = await waiting;
  assert.equal(result.status, 'answered');
  assert.deepEqual(result.answers, { 'Which database?': 'SQLite' });
});

async function until(check, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
