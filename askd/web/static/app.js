// askd's inbox page: every pending question of the user, grouped by
// session, answerable from any tab. Behaviour follows seed section 6.2: a
// dropped socket only reconnects (panels stay), every reconnect
// re-subscribes, events are de-duplicated by requestId, an answer is resent
// until acknowledged, and ask_user_questions_cancelled closes the panel.

import { Alerts } from './alerts.js';
import { showCount } from './badge.js';
import { Connection } from './connection.js';
import { Panel } from './panel.js';
import { h } from './dom.js';
import { loadLanguage, t, translatePage } from './i18n.js';

const TOKEN_KEY = 'askd.token';
const NOTE_MS = 20_000;

// Why a panel closed: each has a catalogue text `note.<reason>`.
const NOTES = new Set(['answered', 'answeredHere', 'timeout', 'cancelled', 'not_pending', 'gone']);

const $ = (id) => document.getElementById(id);

/** The token's claims, for display only (the daemon does the checking). */
function claims(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part.padEnd(Math.ceil(part.length / 4) * 4, '=')));
  } catch {
    return {};
  }
}

// Every URL the page uses is relative to the page, so that a proxy may serve
// it under any path prefix (https://tools.example.com/askd/ -> askd's /).
function wsUrl(token) {
  const url = new URL('ws', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.search = `?token=${encodeURIComponent(token)}`;
  url.hash = '';
  return url.href;
}

/** After a socket that never opened: is the token the reason? */
async function probeToken(token) {
  try {
    const r = await fetch('ws', { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' });
    if (r.status === 401) return t('token.refused');
    if (r.status === 403) return t('token.notUser');
  } catch {
    // the daemon is unreachable: keep retrying
  }
  return null;
}

class Inbox {
  constructor(token, focus, backoff) {
    this.focus = focus;
    this.panels = new Map(); // requestId -> Panel
    this.closed = new Set(); // requestIds that ended: never shown again
    this.groups = new Map(); // sessionId -> {section, list, count}
    this.outbox = new Map(); // requestId -> answer frame not yet acknowledged
    this.replay = null; // {id, seen} while a subscribe is being served
    this.subscribes = 0;
    this.connState = { state: 'connecting' };
    this.inboxEl = $('inbox');
    this.alerts = new Alerts($('alerts'), (requestId) => this.reveal(requestId));
    this.conn = new Connection({
      url: wsUrl(token),
      ...backoff,
      probe: () => probeToken(token),
      onOpen: () => this.onOpen(),
      onFrame: (frame) => this.onFrame(frame),
      onState: (s) => this.onConnState(s),
    });
    $('retry').addEventListener('click', () => this.conn.retryNow());
    window.addEventListener('online', () => this.conn.retryNow());
    setInterval(() => this.tick(), 1000);
    this.render();
  }

  start() {
    this.conn.start();
  }

  // ---- the connection --------------------------------------------------

  onOpen() {
    this.subscribes += 1;
    const id = `subscribe-${this.subscribes}`;
    this.replay = { id, seen: new Set() };
    this.conn.send({ type: 'subscribe', sessionId: this.focus ?? '*', id });
    for (const [requestId, frame] of this.outbox) {
      if (this.conn.send(frame)) this.panels.get(requestId)?.setState('sending', t('panel.sending'));
    }
  }

  onConnState(s) {
    this.connState = s;
    if (s.state !== 'connected') {
      this.replay = null;
      for (const requestId of this.outbox.keys()) {
        this.panels.get(requestId)?.setState('queued', t('panel.queued'));
      }
    }
    if (s.state === 'rejected') showTokenForm(s.message);
    this.renderConn();
  }

  onFrame(frame) {
    const payload = frame.payload && typeof frame.payload === 'object' ? frame.payload : {};
    switch (frame.type) {
      case 'ask_user_questions':
        return this.onAsk(frame.sessionId, payload);
      case 'ask_user_questions_cancelled':
        return this.close(payload.requestId, payload.reason === 'answered' ? 'answered' : payload.reason);
      case 'ack':
        return this.onAck(frame, payload);
      case 'error':
        return this.onError(frame, payload);
      default:
        return undefined; // session_snapshot, pong: nothing to show
    }
  }

  onAsk(sessionId, payload) {
    const requestId = payload.requestId;
    if (typeof requestId !== 'string' || typeof sessionId !== 'string') return;
    if (this.focus !== null && sessionId !== this.focus) return;
    if (this.replay) this.replay.seen.add(requestId);
    // De-duplicate: a re-push after a reconnect must not reset what the user
    // has already picked.
    if (this.panels.has(requestId) || this.closed.has(requestId)) return;
    const panel = new Panel(sessionId, payload, (p) => this.submit(p));
    this.panels.set(requestId, panel);
    const group = this.group(sessionId);
    group.list.append(panel.form);
    $('announce').textContent = t('announce.new', { title: panel.title });
    this.render();
    const [first] = Array.isArray(payload.questions) ? payload.questions : [];
    const more = panel.fields.length > 1 ? t('alert.more', { n: panel.fields.length - 1 }) : '';
    const header = first && typeof first.header === 'string' && first.header ? first.header : t('alert.newQuestion');
    this.alerts.question(requestId, header, `${panel.title}${more}`);
  }

  /** Scroll to a question and focus it (a notification was clicked). */
  reveal(requestId) {
    const panel = this.panels.get(requestId);
    if (!panel) return;
    panel.form.scrollIntoView({ block: 'center' });
    panel.form.focus({ preventScroll: true });
  }

  onAck(frame, payload) {
    if (this.replay && frame.id === this.replay.id) {
      // The replay is complete: whatever it did not re-push ended while
      // this page was away.
      const { seen } = this.replay;
      this.replay = null;
      this.conn.markHealthy();
      for (const requestId of [...this.panels.keys()]) if (!seen.has(requestId)) this.close(requestId, 'gone');
      return;
    }
    const requestId = this.answerFor(frame.id);
    if (requestId === null) return;
    this.outbox.delete(requestId);
    const panel = this.panels.get(requestId);
    if (!panel) return;
    if (payload.accepted === true) {
      panel.answeredHere = true;
      panel.setState('accepted', t('panel.accepted'));
    } else {
      this.close(requestId, 'not_pending');
    }
  }

  onError(frame, payload) {
    const message = typeof payload.message === 'string' ? payload.message : 'error';
    const requestId = this.answerFor(frame.id);
    if (requestId !== null) {
      this.outbox.delete(requestId);
      const panel = this.panels.get(requestId);
      if (panel) {
        panel.setState('editing');
        panel.showStatus(t('panel.refused', { message }), true);
      }
      return;
    }
    if (this.replay && frame.id === this.replay.id) {
      this.replay = null;
      showBanner(t('focus.error', { session: this.focus, message }));
      return;
    }
    console.warn('askd:', payload.code, message);
  }

  answerFor(id) {
    return typeof id === 'string' && id.startsWith('answer:') ? id.slice('answer:'.length) : null;
  }

  // ---- answering ---------------------------------------------------------

  submit(panel) {
    if (this.outbox.has(panel.requestId)) return;
    const result = panel.collect();
    if (result.error) {
      panel.showStatus(result.error, true);
      result.focus?.focus();
      return;
    }
    const frame = {
      type: 'ask_user_questions_result',
      sessionId: panel.sessionId,
      requestId: panel.requestId,
      answers: result.answers,
      id: `answer:${panel.requestId}`,
    };
    // Kept until acknowledged: onOpen resends it after a reconnect. A
    // duplicate is harmless, the daemon answers it with not_pending.
    this.outbox.set(panel.requestId, frame);
    if (this.conn.send(frame)) panel.setState('sending', t('panel.sending'));
    else panel.setState('queued', t('panel.queued'));
  }

  close(requestId, reason) {
    const panel = this.panels.get(requestId);
    this.closed.add(requestId);
    this.outbox.delete(requestId);
    this.alerts.ended(requestId);
    if (!panel) return;
    this.panels.delete(requestId);
    const key = reason === 'answered' && panel.answeredHere ? 'answeredHere' : reason;
    const note = h(
      'div',
      { class: `note note-${NOTES.has(reason) ? reason : 'cancelled'}`, role: 'status', tabindex: '-1', dataset: { requestId } },
      h('span', { class: 'note-q', text: panel.title }),
      h('span', { class: 'note-text', text: t(`note.${NOTES.has(key) ? key : 'cancelled'}`) }),
    );
    const dismiss = () => {
      note.remove();
      this.render();
    };
    note.append(h('button', { type: 'button', class: 'link-button', text: t('note.dismiss'), onclick: dismiss }));
    const hadFocus = panel.form.contains(document.activeElement);
    panel.form.replaceWith(note);
    if (hadFocus) note.focus();
    setTimeout(dismiss, NOTE_MS);
    this.render();
  }

  // ---- drawing -----------------------------------------------------------

  group(sessionId) {
    let group = this.groups.get(sessionId);
    if (group) return group;
    const headingId = `session-${this.groups.size + 1}`;
    const count = h('span', { class: 'count' });
    const list = h('div', { class: 'session-list' });
    const link =
      this.focus === null
        ? h('a', { class: 'focus-link', href: `./?session=${encodeURIComponent(sessionId)}`, text: t('focus.only') })
        : null;
    const section = h(
      'section',
      { class: 'session', 'aria-labelledby': headingId, dataset: { sessionId } },
      h(
        'div',
        { class: 'session-head' },
        h('h2', { id: headingId }, h('span', { class: 'session-word', text: t('session') }), h('code', { text: sessionId })),
        count,
        link,
      ),
      list,
    );
    group = { section, list, count };
    this.groups.set(sessionId, group);
    this.inboxEl.append(section);
    return group;
  }

  render() {
    for (const [sessionId, group] of this.groups) {
      const waiting = group.list.querySelectorAll('form.panel').length;
      if (!group.list.childElementCount) {
        group.section.remove();
        this.groups.delete(sessionId);
        continue;
      }
      group.count.textContent = waiting ? t('session.waiting', { n: waiting }) : '';
    }
    const n = this.panels.size;
    $('empty').hidden = this.groups.size > 0;
    showCount(n);
  }

  renderConn() {
    const { state, retryAt } = this.connState;
    const box = $('conn');
    box.dataset.state = state;
    $('conn-text').textContent = t(`conn.${state === 'rejected' ? 'stopped' : state}`);
    const secs = state === 'waiting' ? Math.max(0, Math.ceil((retryAt - Date.now()) / 1000)) : null;
    $('conn-wait').textContent = secs === null ? '' : t('conn.wait', { n: secs });
    $('retry').hidden = state !== 'waiting';
  }

  tick() {
    const now = Date.now();
    for (const panel of this.panels.values()) panel.tick(now);
    if (this.connState.state === 'waiting') this.renderConn();
  }
}

// ---- start-up: the token ---------------------------------------------------

function showBanner(message) {
  const banner = $('banner');
  banner.textContent = message;
  banner.hidden = !message;
}

function showTokenForm(message = '') {
  showBanner(message);
  $('token-form').hidden = false;
  $('token-input').focus();
}

/** `askd open`'s one-time code for a user token (POST v1/open). */
async function redeem(code) {
  try {
    const r = await fetch('v1/open', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ code }),
      cache: 'no-store',
    });
    const body = await r.json();
    if (r.ok && typeof body.token === 'string') return { token: body.token };
    return { error: body?.error?.message ?? t('token.answered', { status: r.status }) };
  } catch {
    return { error: t('token.unreachable') };
  }
}

/**
 * The page's token, first found: `#code=` (askd open's one-time code),
 * `#token=`, the old `?token=` (still read for one release), then this
 * browser's storage. A token from the address is kept per browser
 * (localStorage), so a link without one opens a working inbox; every
 * credential is taken out of the address bar at once.
 */
async function takeToken(params) {
  const hash = new URLSearchParams(location.hash.slice(1));
  const code = hash.get('code');
  const given = hash.get('token') || params.get('token');
  if (code || given || params.has('token')) {
    params.delete('token');
    const query = params.toString();
    history.replaceState(history.state, '', `${location.pathname}${query ? `?${query}` : ''}`);
  }
  if (given) {
    localStorage.setItem(TOKEN_KEY, given);
    return { token: given };
  }
  if (code) {
    const got = await redeem(code);
    if (got.token) localStorage.setItem(TOKEN_KEY, got.token);
    else if (localStorage.getItem(TOKEN_KEY)) return { token: localStorage.getItem(TOKEN_KEY) };
    return got;
  }
  return { token: localStorage.getItem(TOKEN_KEY) };
}

/** The pill when there is nothing to connect with: say so, not "Connecting…". */
function showNoToken(state, text) {
  $('conn').dataset.state = state;
  $('conn-text').textContent = text;
}

/** `?retry=MS` sets the first backoff ceiling (tests shorten it). */
function backoffFrom(params) {
  const base = Number(params.get('retry'));
  return Number.isFinite(base) && base >= 10 && base <= 5000 ? { base } : {};
}

async function main() {
  const params = new URLSearchParams(location.search);
  const focus = params.get('session') || null;
  const backoff = backoffFrom(params);
  const { token, error } = await takeToken(params);
  await loadLanguage(params);
  translatePage();

  if (focus !== null) {
    $('focus-name').textContent = focus;
    $('focus-bar').hidden = false;
  }
  $('signout').addEventListener('click', () => {
    localStorage.removeItem(TOKEN_KEY);
    location.reload();
  });
  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const value = $('token-input').value.trim();
    if (!value) return;
    localStorage.setItem(TOKEN_KEY, value);
    location.reload();
  });

  if (!token) {
    showNoToken('stopped', t('conn.noToken'));
    showTokenForm(error ? t('token.linkFailed', { why: error }) : '');
    return;
  }
  const { sub, exp } = claims(token);
  if (typeof sub === 'string') {
    $('who-name').textContent = sub;
    $('who').hidden = false;
  }
  $('signout').hidden = false;
  if (typeof exp === 'number' && exp * 1000 < Date.now()) {
    showNoToken('rejected', t('conn.expired'));
    showTokenForm(t('token.expired'));
    return;
  }
  $('empty').hidden = false;
  new Inbox(token, focus, backoff).start();
}

main();
