// The page without askd (protocol section 23): the service worker that
// keeps its shell, and the note of the pending questions last seen, shown
// read-only ("Offline, reconnecting") until askd is reached again.
//
// The note is kept in this browser's storage beside the token (the page
// keeps nothing anywhere else) and holds only what the page shows of each
// question: its session, chip and first line, never a token, an answer link
// or a form. Nothing from it can be answered: answering needs askd, which
// sends the questions again on connecting, and the note makes way for them.

import { h } from './dom.js';
import { formatClock, t } from './i18n.js';

const SEEN_KEY = 'askd.lastSeen';
// A note is shown only to the user who made it, and only as many as fit a look.
const MAX_SEEN = 50;

/** Install the service worker (sw.js beside the page; its scope the page's folder, no wider). */
export function registerServiceWorker() {
  if (!('serviceWorker' in navigator)) return;
  navigator.serviceWorker.register('sw.js', { scope: './' }).catch((err) => console.warn('askd: service worker:', err.message));
}

/** Forget the note (signing out). */
export function forgetSeen() {
  localStorage.removeItem(SEEN_KEY);
}

/** The note of the pending questions last seen by `me`, kept as the inbox changes. */
export class LastSeen {
  constructor(me) {
    this.me = me ?? null;
    this.items = new Map(); // requestId -> {sessionId, header, title, approval, more, expiresAt}
  }

  /** What was noted at the last visit, still in time, if it was this user's. */
  load() {
    let note;
    try {
      note = JSON.parse(localStorage.getItem(SEEN_KEY) ?? 'null');
    } catch {
      return [];
    }
    if (!note || note.user !== this.me || !Array.isArray(note.questions)) return [];
    const now = Date.now();
    return note.questions.filter((q) => q && typeof q.title === 'string' && !(Date.parse(q.expiresAt) < now));
  }

  add(panel, approval) {
    this.items.set(panel.requestId, {
      requestId: panel.requestId,
      sessionId: panel.sessionId,
      header: approval ? '' : panel.header,
      title: panel.title,
      approval,
      more: Math.max(0, panel.fields.length - 1),
      expiresAt: Number.isFinite(panel.expiresAt) ? new Date(panel.expiresAt).toISOString() : null,
    });
    this.save();
  }

  remove(requestId) {
    if (this.items.delete(requestId)) this.save();
  }

  save() {
    const questions = [...this.items.values()].slice(-MAX_SEEN);
    try {
      localStorage.setItem(SEEN_KEY, JSON.stringify({ user: this.me, questions }));
    } catch {
      // A full storage keeps the older note: the live inbox does not depend on it.
    }
  }
}

/** Draw the note read-only into `box` (no form, no button); hidden when there is nothing. */
export function showSeen(box, questions) {
  const list = box.querySelector('.offline-list');
  list.replaceChildren(
    ...questions.map((q) =>
      h(
        'li',
        { class: 'offline-item', dataset: { requestId: String(q.requestId) } },
        q.approval ? h('span', { class: 'chip', text: t('approval.chip') }) : q.header ? h('span', { class: 'chip', text: q.header }) : null,
        h('span', { class: 'offline-q', text: q.title }),
        q.more ? h('span', { class: 'offline-more', text: t('alert.more', { n: q.more }) }) : null,
        h(
          'span',
          { class: 'offline-meta' },
          h('span', { text: t('session') }),
          ' ',
          h('code', { text: String(q.sessionId) }),
          q.expiresAt ? h('span', { text: ` · ${t('offline.until', { time: formatClock(new Date(q.expiresAt)) })}` }) : null,
        ),
      ),
    ),
  );
  box.hidden = questions.length === 0;
}
