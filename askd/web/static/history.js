// The History view (protocol section 19): the questions asked of this
// person that ended, newest first, from `GET /v1/me/history` through
// askd-client's Inbox.history(). Loaded each time the view opens, again
// when a question ends while it is open, and on *Refresh*. Every text from
// askd (question texts, answers, names) goes in as a text node (dom.js's
// h): an answer is what a person typed and is shown as typed, never as markup.

import { h, uid } from './dom.js';
import { formatDateTime, formatList, t } from './i18n.js';
import { revealText } from './hidden.js';
import { summary } from './markdown.js';

// How a question ended, and how an answer reached askd: each has its words (history.status.*, history.via.*).
const STATUSES = new Set(['answered', 'declined', 'timeout', 'cancelled', 'withdrawn']);
// An approval's end in its own words (history.approval.*): approved, denied, timed out (protocol section 17).
const APPROVAL_WORD = { answered: 'approved', declined: 'denied' };
const VIAS = new Set(['ws', 'link', 'mcp', 'admin']);
// The trail's record is written in the same commit the end is pushed from; a short wait lets a burst of ends load once.
const RELOAD_MS = 300;
const SEEN_MAX = 1000;

const $ = (id) => document.getElementById(id);

const shown = (value) => (Array.isArray(value) ? formatList(value.map(String)) : String(value));

export class HistoryView {
  /**
   * @param {import('./vendor/askd-client/index.js').Inbox} client  the page's inbox: its token and its `closed` events
   * @param {string | undefined} me  the token's user: their own answers say "you"
   */
  constructor(client, me) {
    this.client = client;
    this.me = me;
    this.open = false;
    this.loads = 0; // a newer load wins over a slower older one
    this.timer = undefined;
    this.section = $('history');
    this.list = $('history-list');
    this.tabs = { inbox: $('view-inbox'), history: $('view-history') };
    this.tabs.inbox.addEventListener('click', () => this.show(false));
    this.tabs.history.addEventListener('click', () => this.show(true));
    $('history-refresh').addEventListener('click', () => this.load());
    $('history-retry').addEventListener('click', () => this.load());
    // askd's history names each question (header) but does not say which were approvals (protocol section 19):
    // what this tab was shown says it, and names one asked before askd kept titles.
    this.seen = new Map(); // requestId -> {title, action: the action's name, or null for questions}, the last SEEN_MAX shown
    client.on('asked', (q) => this.remember(q.requestId, q.payload));
    client.on('closed', () => {
      if (!this.open) return;
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.load(), RELOAD_MS);
    });
    $('views').hidden = false;
  }

  /**
   * What a shown question was: its title, as its panel had it (an action's
   * summary or name, else the first question's header or text), and for an
   * approval its action's name.
   */
  remember(requestId, payload) {
    const action = payload?.action && typeof payload.action === 'object' ? payload.action : null;
    const first = Array.isArray(payload?.questions) ? payload.questions[0] : undefined;
    const named = action
      ? (typeof action.summary === 'string' && summary(action.summary)) || action.name
      : first && (first.header || summary(String(first.question ?? '')) || first.question);
    const title = typeof named === 'string' ? revealText(named) : ''; // hidden characters as marks, as the panel showed them
    this.seen.delete(requestId);
    this.seen.set(requestId, { title, action: action ? revealText(typeof action.name === 'string' ? action.name : '') : null });
    if (this.seen.size > SEEN_MAX) this.seen.delete(this.seen.keys().next().value);
  }

  /** Open the History view (true) or go back to the inbox (false). */
  show(open) {
    if (open === this.open) return;
    this.open = open;
    this.tabs.history.setAttribute('aria-pressed', String(open));
    this.tabs.inbox.setAttribute('aria-pressed', String(!open));
    this.section.hidden = !open;
    $('inbox-view').hidden = open; // the inbox keeps running behind it: questions still arrive and alert
    if (open) this.load();
    else clearTimeout(this.timer);
  }

  async load() {
    const load = ++this.loads;
    this.section.setAttribute('aria-busy', 'true');
    $('history-state').textContent = t('history.loading');
    $('history-state').hidden = false;
    let entries;
    let failure;
    try {
      entries = await this.client.history();
    } catch (err) {
      failure = err;
    }
    if (load !== this.loads) return;
    this.section.removeAttribute('aria-busy');
    $('history-state').hidden = true;
    if (failure) return this.fail(failure);
    $('history-error').hidden = true;
    $('history-empty').hidden = entries.length > 0;
    this.list.replaceChildren(...entries.map((entry) => this.item(entry)));
    $('announce').textContent = t('history.count', { n: entries.length });
  }

  fail(err) {
    // AskdError carries askd's own message; anything else (no network) is said in the reader's language.
    const why = typeof err?.code === 'string' && typeof err?.status === 'number' ? err.message : t('history.unreachable');
    $('history-error-text').textContent = t('history.error', { message: why });
    $('history-error').hidden = false;
    $('history-empty').hidden = true;
    this.list.replaceChildren();
  }

  /**
   * One ended question: its title, how it ended, the answers, who and
   * through what, when. An approval this tab was shown says approved or
   * denied and names its action; it has no answers to be gone.
   */
  item(entry) {
    const status = STATUSES.has(entry.status) ? entry.status : 'cancelled';
    const answers = entry.answers && typeof entry.answers === 'object' ? Object.entries(entry.answers) : [];
    const seen = this.seen.get(entry.requestId);
    const approval = typeof seen?.action === 'string';
    // The title askd's history keeps (header); for a question asked before askd kept titles, the title this
    // tab saw, else its first question (an answer's key, while kept).
    const title =
      revealText(entry.header) || seen?.title || (answers.length ? summary(answers[0][0]) || answers[0][0] : '') || t('history.untitled');
    const ended = new Date(entry.endedAt);
    const titleId = uid('history');
    const word = approval && APPROVAL_WORD[status] ? `history.approval.${APPROVAL_WORD[status]}` : `history.status.${status}`;
    // "The answers are no longer kept" only where there were answers: a question this tab saw answered
    // (one it did not see may have been an approval, which has none; askd's history does not say).
    const gone = !answers.length && status === 'answered' && seen !== undefined && !approval;
    return h(
      'li',
      { class: `hist hist-${status}`, 'aria-labelledby': titleId, dataset: { requestId: entry.requestId, status, kind: approval ? 'approval' : 'question' } },
      h(
        'div',
        { class: 'hist-head' },
        h('span', { class: `hist-status status-${status}`, text: t(word) }),
        h('span', { class: 'hist-title', id: titleId, text: title }),
      ),
      approval && seen.action && seen.action !== title
        ? h('p', { class: 'hist-action' }, `${t('history.action')} `, h('code', { text: seen.action }))
        : null,
      answers.length ? this.answers(answers) : null,
      gone ? h('p', { class: 'hist-gone', text: t('history.answersGone') }) : null,
      h(
        'p',
        { class: 'hist-meta' },
        this.by(entry, status),
        h('time', { datetime: entry.endedAt, text: Number.isNaN(ended.getTime()) ? entry.endedAt : formatDateTime(ended) }),
        h('span', { class: 'hist-session' }, `${t('session')} `, h('code', { text: entry.sessionId })),
      ),
    );
  }

  answers(entries) {
    const one = entries.length === 1;
    return h(
      'dl',
      { class: 'hist-answers' },
      entries.flatMap(([question, value]) => [
        h('dt', { class: one ? 'sr-only' : null, text: summary(question) || revealText(question) }),
        h('dd', { text: revealText(shown(value)) }),
      ]),
    );
  }

  /** "By you, in the inbox page": who answered or declined it and through what; who cancelled it. */
  by(entry, status) {
    if (status === 'cancelled' || status === 'withdrawn') {
      const key = entry.via === 'admin' ? 'history.byAdmin' : entry.via === 'agent' ? 'history.byAgent' : null;
      return key ? h('span', { class: 'hist-by', text: t(key) }) : null;
    }
    if (status !== 'answered' && status !== 'declined') return null;
    const via = VIAS.has(entry.via) ? t(`history.via.${entry.via}`) : null;
    const who = entry.answeredBy === null || entry.answeredBy === undefined ? t('approval.admin') : entry.answeredBy === this.me ? t('panel.you') : entry.answeredBy;
    return h('span', { class: 'hist-by', text: via ? t('history.byVia', { who, via }) : t('history.by', { who }) });
  }
}
