// The inbox's handling of frames askd 1.2 sends (answeredBy, extended,
// escalated, re-pushes after a drop) and the frames it sends for extend and
// decline, against a scripted socket whose every frame the test picks
// (test/inbox.test.js checks the same against a real askd).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';

import { Inbox } from '../dist/index.js';

/** A WebSocket whose server side is the test: it reads `sent` and calls `push`. */
class ScriptedSocket {
  static last = null;
  readyState = 0;
  sent = [];
  onopen = null;
  onmessage = null;
  onclose = null;
  onerror = null;

  constructor(url) {
    this.url = url;
    ScriptedSocket.last = this;
    queueMicrotask(() => {
      this.readyState = 1;
      this.onopen?.({});
    });
  }

  send(text) {
    this.sent.push(JSON.parse(text));
  }

  close() {
    this.readyState = 3;
  }

  push(frame) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }

  /** Reply to the subscribe: re-push `questions`, then the closing ack. */
  replay(...asked) {
    const subscribe = this.sent.find((f) => f.type === 'subscribe');
    for (const frame of asked) this.push(frame);
    this.push({ type: 'ack', id: subscribe.id, payload: { repushed: asked.length, sessionId: '*' } });
  }
}

const ASKED = {
  type: 'ask_user_questions',
  sessionId: 's1',
  payload: { requestId: 'r1', questions: [{ question: 'Ship?' }], metadata: {}, createdAt: 'c', expiresAt: 'e1' },
};

async function connected(options = {}) {
  const inbox = new Inbox({ url: 'http://askd.test', token: 't0k', WebSocket: ScriptedSocket, heartbeatMs: 0, ...options });
  const shown = [];
  inbox.on('asked', (q) => shown.push(q));
  inbox.start();
  await new Promise((resolve) => queueMicrotask(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  const socket = ScriptedSocket.last;
  socket.replay(ASKED);
  await inbox.ready();
  assert.equal(shown.length, 1);
  return { inbox, socket };
}

test('the token goes in the query of the /ws URL a browser opens', async () => {
  const { inbox, socket } = await connected();
  assert.equal(socket.url, 'ws://askd.test/ws?token=t0k');
  assert.deepEqual(socket.sent[0], { type: 'subscribe', sessionId: '*', id: socket.sent[0].id });
  inbox.close();
});

test('extended moves expiresAt; a close passes answeredBy on when askd names it', async () => {
  const { inbox, socket } = await connected();
  const events = [];
  inbox.on('extended', (e) => events.push(e));
  inbox.on('closed', (c) => events.push(c));
  socket.push({ type: 'ask_user_questions_extended', sessionId: 's1', payload: { requestId: 'r1', expiresAt: 'e2' } });
  assert.equal(inbox.questions[0].expiresAt, 'e2');
  socket.push({ type: 'ask_user_questions_cancelled', sessionId: 's1', payload: { requestId: 'r1', reason: 'declined', answeredBy: 'bob' } });
  assert.deepEqual(events, [
    { sessionId: 's1', requestId: 'r1', expiresAt: 'e2' },
    { sessionId: 's1', requestId: 'r1', reason: 'declined', answeredBy: 'bob' },
  ]);
  inbox.close();
});

test('a close carries via and the decline reason; an escalation step updates the question', async () => {
  const { inbox, socket } = await connected();
  const events = [];
  for (const type of ['escalated', 'extended', 'closed']) inbox.on(type, (e) => events.push([type, e]));
  const step = { requestId: 'r1', to: ['group:a', 'group:b'], escalatedTo: ['group:b'], escalations: 1 };
  socket.push({ type: 'ask_user_questions_escalated', sessionId: 's1', payload: step });
  assert.deepEqual(inbox.questions[0].payload.to, ['group:a', 'group:b']);
  socket.push({ type: 'ask_user_questions_extended', sessionId: 's1', payload: { requestId: 'r1', expiresAt: 'e2', extensionLeftSeconds: 0 } });
  assert.equal(inbox.questions[0].payload.extensionLeftSeconds, 0);
  socket.push({
    type: 'ask_user_questions_cancelled',
    sessionId: 's1',
    payload: { requestId: 'r1', reason: 'declined', answeredBy: 'bob', via: 'link', declineReason: 'not mine' },
  });
  assert.deepEqual(events, [
    ['escalated', { sessionId: 's1', requestId: 'r1', to: ['group:a', 'group:b'], escalatedTo: ['group:b'], escalations: 1 }],
    ['extended', { sessionId: 's1', requestId: 'r1', expiresAt: 'e2', extensionLeftSeconds: 0 }],
    ['closed', { sessionId: 's1', requestId: 'r1', reason: 'declined', answeredBy: 'bob', via: 'link', declineReason: 'not mine' }],
  ]);
  inbox.close();
});

test('a re-push after a reconnect tells what changed while the link was down, and nothing when nothing did', async () => {
  const { inbox, socket } = await connected({ backoff: { base: 1, cap: 1 } });
  const events = [];
  for (const type of ['asked', 'escalated', 'extended', 'closed']) inbox.on(type, (e) => events.push([type, e]));
  const relink = async (from, ...asked) => {
    const reconnected = new Promise((resolve) => {
      const off = inbox.on('state', (s) => s.state === 'connected' && (off(), resolve()));
    });
    from.readyState = 3;
    from.onclose({});
    while (ScriptedSocket.last === from || ScriptedSocket.last.readyState !== 1) await new Promise((resolve) => setTimeout(resolve, 1));
    const socket = ScriptedSocket.last;
    socket.replay(...asked);
    await reconnected;
    return socket;
  };
  const next = await relink(socket, ASKED);
  assert.deepEqual(events, [], 'the same question again: nothing to tell');
  const moved = { to: ['group:a', 'group:b'], escalatedTo: ['group:b'], escalations: 1, expiresAt: 'e9', extensionLeftSeconds: 5 };
  await relink(next, { ...ASKED, payload: { ...ASKED.payload, ...moved } });
  assert.deepEqual(events, [
    ['extended', { sessionId: 's1', requestId: 'r1', expiresAt: 'e9', extensionLeftSeconds: 5 }],
    ['escalated', { sessionId: 's1', requestId: 'r1', to: ['group:a', 'group:b'], escalatedTo: ['group:b'], escalations: 1 }],
  ]);
  assert.equal(inbox.questions[0].expiresAt, 'e9');
  inbox.close();
});

test('extend and decline send the v1.2 frames and resolve with the ack', async () => {
  const { inbox, socket } = await connected();
  const extend = inbox.extend('r1', 120);
  const decline = inbox.decline('r1', 'not mine');
  const [e, d] = socket.sent.slice(-2);
  assert.deepEqual(e, { type: 'extend', sessionId: 's1', requestId: 'r1', seconds: 120, id: e.id });
  assert.deepEqual(d, { type: 'decline', sessionId: 's1', requestId: 'r1', reason: 'not mine', id: d.id });
  assert.notEqual(e.id, d.id);
  socket.push({ type: 'ack', id: e.id, payload: { extended: true, expiresAt: 'e3' } });
  socket.push({ type: 'ack', id: d.id, payload: { accepted: true } });
  assert.deepEqual(await extend, { extended: true, expiresAt: 'e3' });
  assert.deepEqual(await decline, { accepted: true });
  inbox.close();
});

test('a call whose ack was lost with the link is sent again on the next one', async () => {
  const { inbox, socket } = await connected({ backoff: { base: 1, cap: 1 } });
  const verdict = inbox.answer('r1', { 'Ship?': 'yes' });
  const first = socket.sent.at(-1);
  const reconnecting = new Promise((resolve) => {
    const off = inbox.on('state', (s) => s.state === 'connecting' && (off(), resolve()));
  });
  socket.readyState = 3;
  socket.onclose({}); // the link drops before askd's ack
  await reconnecting;
  await new Promise((resolve) => setImmediate(resolve));
  const next = ScriptedSocket.last;
  assert.notEqual(next, socket);
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(next.sent.map((f) => f.type), ['subscribe', 'ask_user_questions_result']);
  assert.deepEqual(next.sent[1], first);
  next.replay(ASKED);
  next.push({ type: 'ack', id: first.id, payload: { accepted: false, reason: 'not_pending' } });
  assert.deepEqual(await verdict, { accepted: false, reason: 'not_pending' });
  inbox.close();
});

test('npm pack ships the build, its types, the README and the licence', () => {
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8' }));
  const files = pack.files.map((f) => f.path);
  for (const want of ['dist/index.js', 'dist/index.d.ts', 'dist/protocol.d.ts', 'README.md', 'LICENSE', 'package.json']) {
    assert.ok(files.includes(want), `${want} not in ${files}`);
  }
  assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')));
});
