// askd's inbox page: every pending question of the user, grouped by
// session, answerable from any tab. The user side of the protocol (subscribe
// on every connect, de-duplicate by requestId, resend an answer until
// acknowledged, reconnect with backoff, close what ended meanwhile) is
// askd-client's Inbox, the same package web apps embed; this file draws it:
// panels, notes, alerts, the badge, the status pill and the token form.
// The History view beside it is history.js.

import { Alerts } from './alerts.js';
import { showCount } from './badge.js';
import { Panel } from './panel.js';
import { h } from './dom.js';
import { formatClock, loadLanguage, t, translatePage } from './i18n.js';
import { NOTES, noteText } from './notes.js';
import { forgetSeen, LastSeen, registerServiceWorker, showSeen } from './offline.js';
import { ApprovalPanel } from './approval.js';
import { HistoryView } from './history.js';
import { claims, takeToken, TOKEN_KEY } from './token.js';
import { Inbox } from './vendor/askd-client/index.js';

const NOTE_MS = 20_000;
// Questions arriving within this long are announced as one summary ("5 waiting, 2 approvals"): on load, askd pushes them all at once.
const ANNOUNCE_MS = 400;
const BACKOFF_CAP_MS = 5000;

const $ = (id) => document.getElementById(id);

// The client's states without a text of their own. (`paused` is not used:
// the page stays connected while hidden, so that alerts still come.)
const CONN_TEXT = { rejected: 'stopped', closed: 'stopped', paused: 'stopped' };

// Every URL the page uses is relative to the page, so that a proxy may serve
// it under any path prefix (https://tools.example.com/askd/ -> askd's /).
function wsUrl() {
  const url = new URL('ws', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  url.search = '';
  url.hash = '';
  return url.href;
}

/** Why the client stopped, in the reader's language. */
function rejection(error) {
  if (error.code === 'token_ended') return t('token.ended');
  if (error.status === 403) return t('token.notUser');
  if (error.status === 401) return t('token.refused');
  return error.message;
}

class InboxView {
  constructor(token, focus, backoff, me) {
    this.focus = focus;
    this.me = me; // the token's user: a panel asked of them says 'you'
    this.panels = new Map(); // requestId -> Panel
    this.groups = new Map(); // sessionId -> {section, list, count}
    this.sending = new Map(); // requestId -> the status text of its answer or decline, waiting for askd's verdict
    this.connState = { state: 'connecting' };
    // Until askd is first reached, the page may be the service worker's
    // shell: the questions last seen are shown read-only (offline.js).
    this.everConnected = false;
    this.failedToConnect = false;
    this.seen = new LastSeen(me);
    this.arrived = []; // the panels not yet announced
    this.announceTimer = undefined;
    this.inboxEl = $('inbox');
    this.alerts = new Alerts($('alerts'), (requestId) => this.reveal(requestId));
    this.client = new Inbox({ url: wsUrl(), token, sessionId: focus ?? '*', backoff: { cap: BACKOFF_CAP_MS, ...backoff } });
    this.client.on('asked', (q) => this.onAsk(q.sessionId, q.payload));
    this.client.on('closed', (c) => this.close(c.requestId, { ...c, reason: c.reason === 'ended' ? 'gone' : c.reason }));
    this.client.on('extended', (e) => this.panels.get(e.requestId)?.extendTo(e.expiresAt, e.extensionLeftSeconds));
    this.client.on('escalated', (e) => this.panels.get(e.requestId)?.setAudience(e.to, e.escalatedTo));
    this.client.on('voted', (v) => this.panels.get(v.requestId)?.setApprovals?.(v.approvals, v.needed));
    this.client.on('state', (s) => this.onConnState(s));
    this.client.on('refused', (err) => showBanner(t('focus.error', { session: this.focus, message: err.message })));
    this.client.on('error', (err) => console.warn('askd:', err.code, err.message));
    $('retry').addEventListener('click', () => this.client.retryNow());
    // The pill says "Offline" as the browser does (the client itself retries on `online`).
    addEventListener('offline', () => this.renderConn());
    addEventListener('online', () => this.renderConn());
    setInterval(() => this.tick(), 1000);
    this.render();
  }

  start() {
    this.client.start();
  }

  // ---- the connection --------------------------------------------------

  onConnState(s) {
    this.connState = s;
    // The client sends what waits once it is connected again.
    for (const [requestId, sendingKey] of this.sending) {
      const [state, key] = s.state === 'connected' ? ['sending', sendingKey] : ['queued', 'panel.queued'];
      this.panels.get(requestId)?.setState(state, t(key));
    }
    if (s.state === 'rejected') showTokenForm(rejection(s.error));
    if (s.state === 'connected') {
      // askd sends every pending question on connecting: they replace the note.
      this.everConnected = true;
      this.failedToConnect = false;
      $('offline').hidden = true;
      this.seen.save();
    } else if (s.state === 'waiting') {
      this.failedToConnect = true;
      if (!this.everConnected) showSeen($('offline'), this.seen.load());
    }
    this.renderConn();
    this.render();
  }

  onAsk(sessionId, payload) {
    const requestId = payload.requestId;
    const Kind = payload.action ? ApprovalPanel : Panel;
    const panel = new Kind(sessionId, payload, {
      me: this.me,
      onSubmit: (p) => this.submit(p),
      onApprove: (p, options) => this.approve(p, options),
      onExtend: (p, seconds) => this.extend(p, seconds),
      onDecline: (p, reason) => this.decline(p, reason),
    });
    this.panels.set(requestId, panel);
    this.seen.add(panel, Kind === ApprovalPanel);
    const group = this.group(sessionId);
    group.list.append(panel.form);
    this.arrived.push(panel);
    this.announceTimer ??= setTimeout(() => this.announce(), ANNOUNCE_MS);
    this.render();
    const more = panel.fields.length > 1 ? t('alert.more', { n: panel.fields.length - 1 }) : '';
    this.alerts.question(requestId, panel.header || t('alert.newQuestion'), `${panel.title}${more}`);
  }

  /**
   * One message for the live region per burst: one question arriving is
   * named ("New question: …"); several at once (a load, a reconnect) are
   * counted with all that waits ("5 waiting, 2 approvals"), so that no
   * announcement overwrites another unheard.
   */
  announce() {
    this.announceTimer = undefined;
    const arrived = this.arrived.filter((p) => this.panels.get(p.requestId) === p);
    this.arrived = [];
    if (!arrived.length) return;
    let message;
    if (arrived.length === 1) {
      message = t('announce.new', { title: arrived[0].title });
    } else {
      const waiting = t('announce.waiting', { n: this.panels.size });
      const approvals = [...this.panels.values()].filter((p) => p instanceof ApprovalPanel).length;
      message = approvals ? t('announce.summary', { waiting, approvals: t('announce.approvals', { n: approvals }) }) : waiting;
    }
    $('announce').textContent = message;
  }

  /** Scroll to a question and focus it (a notification was clicked). */
  reveal(requestId) {
    const panel = this.panels.get(requestId);
    if (!panel) return;
    panel.form.scrollIntoView({ block: 'center' });
    panel.form.focus({ preventScroll: true });
  }

  // ---- answering ---------------------------------------------------------

  async submit(panel) {
    if (this.sending.has(panel.requestId)) return;
    const result = panel.collect();
    if (result.error) {
      panel.showStatus(result.error, true);
      result.focus?.focus();
      return;
    }
    if (await this.sendAndWait(panel, 'panel.sending', (options) => this.client.answer(panel.requestId, result.answers, options))) {
      panel.answeredHere = true;
      panel.setState('accepted', t('panel.accepted'));
    }
  }

  /** *Approve* (protocol section 17): the last approval of a quorum ends it; an earlier one waits for the others. */
  async approve(panel, options) {
    if (this.sending.has(panel.requestId)) return;
    const verdict = await this.sendAndWait(panel, 'approval.sending', (o) => this.client.approve(panel.requestId, { ...options, ...o }));
    if (!verdict) return;
    if (verdict.approvals < verdict.needed) return panel.showVoted();
    panel.answeredHere = true;
    panel.setState('accepted', t('approval.approved'));
  }

  /** *Decline*: askd closes the question in every tab of its audience; the agent gets `declined`. */
  async decline(panel, reason) {
    if (this.sending.has(panel.requestId)) return;
    if (await this.sendAndWait(panel, 'panel.declining', (options) => this.client.decline(panel.requestId, reason, options))) {
      panel.declinedHere = true;
      panel.setState('accepted', t('panel.declined'));
    }
  }

  /**
   * Send an answer or a decline (`call`) and wait for askd's verdict, the
   * panel locked meanwhile (`queued` while the link is down: the client
   * sends it on reconnect). askd's verdict when it took it, else false; a refused frame unlocks
   * the panel with the reason, and a question that had ended closes.
   */
  async sendAndWait(panel, sendingKey, call) {
    const { requestId } = panel;
    this.sending.set(requestId, sendingKey);
    if (this.connState.state === 'connected') panel.setState('sending', t(sendingKey));
    else panel.setState('queued', t('panel.queued'));
    let verdict;
    try {
      verdict = await call({ sessionId: panel.sessionId });
    } catch (err) {
      panel.setState('editing');
      panel.showStatus(t('panel.refused', { message: err.message }), true);
      return false;
    } finally {
      this.sending.delete(requestId);
    }
    if (!this.panels.has(requestId)) return false; // closed meanwhile
    if (verdict.reason === 'already_voted') panel.showVoted(true); // still open: *Deny* is left
    else if (!verdict.accepted) this.close(requestId, { reason: 'not_pending' });
    return verdict.accepted && verdict;
  }

  /** *More time*: every tab's countdown moves with askd's ask_user_questions_extended. */
  async extend(panel, seconds) {
    const { requestId } = panel;
    panel.moreEl.disabled = true;
    let verdict;
    try {
      verdict = await this.client.extend(requestId, seconds, { sessionId: panel.sessionId });
    } catch (err) {
      panel.showStatus(t('panel.refused', { message: err.message }), true);
      return;
    } finally {
      panel.moreEl.disabled = panel.locked;
    }
    if (!this.panels.has(requestId)) return;
    if (verdict.extended) {
      panel.showStatus(t('panel.extended', { time: formatClock(new Date(verdict.expiresAt)) }), false);
    } else if (verdict.reason === 'not_allowed') {
      panel.setAllowance(0);
      panel.showStatus(t('panel.notAllowed'), true);
    } else {
      this.close(requestId, { reason: 'not_pending' });
    }
  }

  close(requestId, closed) {
    const panel = this.panels.get(requestId);
    this.alerts.ended(requestId);
    this.seen.remove(requestId);
    if (!panel) return;
    this.panels.delete(requestId);
    this.sending.delete(requestId);
    const { reason } = closed;
    const note = h(
      'div',
      { class: `note note-${NOTES.has(reason) ? reason : 'cancelled'}`, role: 'status', tabindex: '-1', dataset: { requestId } },
      panel.header ? h('span', { class: 'chip', text: panel.header }) : null,
      h('span', { class: 'note-q', text: panel.title }),
      h('span', { class: 'note-text', text: noteText(panel, closed, this.me) }),
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
        h('h2', { id: headingId }, h('span', { class: 'session-word', text: t('session') }), this.sessionId(sessionId)),
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

  /** A session's id on one line, cut with "…" when long: whole in its title, and unfolded by a tap or click. */
  sessionId(sessionId) {
    const id = h('code', { class: 'session-id', title: sessionId, text: sessionId });
    id.addEventListener('click', () => id.classList.toggle('whole'));
    return id;
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
    $('empty').hidden = this.groups.size > 0 || !$('offline').hidden;
    showCount(n);
  }

  renderConn() {
    const { state, retryAt } = this.connState;
    const box = $('conn');
    box.dataset.state = state === 'closed' ? 'stopped' : state;
    $('conn-text').textContent = this.offline() ? t('conn.offline') : t(`conn.${CONN_TEXT[state] ?? state}`);
    const secs = state === 'waiting' ? Math.max(0, Math.ceil((retryAt - Date.now()) / 1000)) : null;
    $('conn-wait').textContent = secs === null ? '' : t('conn.wait', { n: secs });
    // Without a network *Reconnect now* could not help: the client reconnects on the browser's `online`.
    $('retry').hidden = state !== 'waiting' || !navigator.onLine;
  }

  /** Trying to reach askd without a network, or not reached once since the page loaded (the shell offline). */
  offline() {
    const { state } = this.connState;
    if (state !== 'waiting' && state !== 'connecting') return false;
    return !navigator.onLine || (!this.everConnected && this.failedToConnect);
  }

  tick() {
    const now = Date.now();
    for (const panel of this.panels.values()) panel.tick(now);
    if (this.connState.state === 'waiting') this.renderConn();
  }
}

// ---- start-up: the token ---------------------------------------------------

/**
 * A message at the top. askd's messages name commands in backticks
 * ("run `askd open` again"): those parts are shown as code, not as
 * backticks (the rest stays text; nothing is parsed as markup).
 */
function showBanner(message) {
  const banner = $('banner');
  banner.replaceChildren(...message.split(/`([^`]+)`/).map((part, i) => (i % 2 ? h('code', { text: part }) : part)));
  banner.hidden = !message;
}

function showTokenForm(message = '') {
  showBanner(message);
  $('token-form').hidden = false;
  $('token-input').focus();
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
  // A link pasted into an open tab differs only in its fragment, which
  // loads nothing: start again so that its #code= is taken.
  addEventListener('hashchange', () => {
    const hash = new URLSearchParams(location.hash.slice(1));
    if (hash.has('code') || hash.has('token')) location.reload();
  });
  registerServiceWorker();
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
    forgetSeen();
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
    showTokenForm(error());
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
  const me = typeof sub === 'string' ? sub : undefined;
  const view = new InboxView(token, focus, backoff, me);
  new HistoryView(view.client, me);
  view.start();
}

main();
