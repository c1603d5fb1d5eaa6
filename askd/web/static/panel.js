// One pending request as a form: whom it is asked of, its questions (radio
// buttons, or checkboxes for multiSelect, each with a real <label for>), an
// "Other" free-text answer, a countdown to expiresAt with *More time* when
// the ask allows it, *Decline* with an optional reason, and one Submit
// button. Question text, descriptions and previews are Markdown
// (markdown.js); header and label stay plain text.

import { h, uid } from './dom.js';
import { anyHidden, revealNodes, revealText, warningLine } from './hidden.js';
import { formatClock, formatLeft, formatList, t } from './i18n.js';
import { renderNodes, summary } from './markdown.js';

const URGENT_MS = 60_000;
// What one *More time* click asks for: five minutes, or what is left of the allowance.
const MORE_TIME_S = 300;
const GROUP = 'group:';
const REASON_MAX = 1000; // askd's limit on a decline's reason

/**
 * "Asked of you", "Asked of oncall, escalated to leads": `to` and
 * `escalatedTo` as askd pushes them (none: asked of this user alone).
 */
export function audienceText(to, escalatedTo, me) {
  if (!Array.isArray(to) || !to.length) return t('panel.askedOf', { who: t('panel.you') });
  const name = (entry) => (entry.startsWith(GROUP) ? entry.slice(GROUP.length) : entry === me ? t('panel.you') : entry);
  const added = new Set(Array.isArray(escalatedTo) ? escalatedTo : []);
  const who = formatList(to.filter((e) => !added.has(e)).map(name));
  if (!added.size) return t('panel.askedOf', { who });
  return t('panel.askedOfEscalated', { who, more: formatList([...added].map(name)) });
}

function text(value) {
  return typeof value === 'string' ? value : '';
}

/** One question's inputs, and how to read its answer back. */
class QuestionField {
  constructor(q) {
    this.question = text(q.question);
    this.header = text(q.header);
    this.multi = q.multiSelect === true;
    const options = Array.isArray(q.options) ? q.options.filter((o) => o && text(o.label)) : [];
    const legendId = uid('legend');
    const legend = h(
      'legend',
      { id: legendId },
      text(q.header) ? h('span', { class: 'chip' }, revealNodes(q.header)) : null,
      h('div', { class: 'qtext md' }, renderNodes(this.question)),
      this.multi && options.length ? h('span', { class: 'qhint', text: t('panel.chooseAny') }) : null,
    );
    this.legendId = legendId;
    this.choices = [];
    this.other = null;
    this.freeText = null;
    let body;
    if (options.length) {
      const name = uid('group');
      const type = this.multi ? 'checkbox' : 'radio';
      const rows = options.map((o) => this._option(type, name, text(o.label), text(o.description), text(o.preview)));
      rows.push(this._otherRow(type, name));
      body = h('div', { class: 'options' }, rows);
      if (this.choices.some((c) => c.preview)) body = this._withPreview(body);
    } else {
      const id = uid('free');
      this.freeText = h('textarea', { id, rows: 2, placeholder: t('panel.freePlaceholder'), autocomplete: 'off' });
      body = h('div', { class: 'free' }, h('label', { for: id, class: 'free-label', text: t('panel.freeLabel') }), this.freeText);
    }
    this.fieldset = h('fieldset', { class: 'question' }, legend, body);
  }

  _option(type, name, label, description, preview) {
    const id = uid('opt');
    const input = h('input', { type, name, id, value: label });
    this.choices.push({ input, label, preview, nodes: null });
    return h(
      'div',
      { class: 'option' },
      input,
      h(
        'label',
        { for: id },
        h('span', { class: 'opt-label' }, revealNodes(label)),
        description ? h('div', { class: 'opt-desc md' }, renderNodes(description)) : null,
      ),
    );
  }

  /**
   * One preview box per question, showing the focused option's preview, or
   * else the chosen one's (the first option's before any is chosen). It is
   * a focusable region, so a keyboard user scrolls it after the options.
   */
  _withPreview(options) {
    this.previewBody = h('div', { class: 'preview-body md' });
    this.previewCaption = h('div', { class: 'preview-caption', 'aria-hidden': 'true' });
    // Named by title, not aria-label: an option's label then names only its input.
    this.preview = h('div', { class: 'preview', role: 'region', tabindex: '0' }, this.previewCaption, this.previewBody);
    this.shown = undefined;
    const chosen = () => this.choices.findLast((c) => c.input.checked && c.preview) ?? this.choices.find((c) => c.preview);
    const box = h('div', { class: 'with-preview' }, options, this.preview);
    box.addEventListener('focusin', (event) => {
      const choice = this.choices.find((c) => c.input === event.target);
      if (choice) this._show(choice);
    });
    box.addEventListener('focusout', (event) => {
      if (!box.contains(event.relatedTarget)) this._show(chosen());
    });
    box.addEventListener('change', (event) => {
      const choice = this.choices.find((c) => c.input === event.target);
      if (choice?.input.checked) this._show(choice);
      else if (choice) this._show(chosen());
    });
    this._show(chosen());
    return box;
  }

  _show(choice) {
    if (choice === this.shown) return;
    this.shown = choice;
    this.preview.hidden = !choice?.preview;
    if (!choice?.preview) return;
    // Rendered once per option, on first show: a long diff costs nothing until looked at.
    choice.nodes ??= h('div', {}, renderNodes(choice.preview, { tabbable: false }));
    this.previewBody.replaceChildren(choice.nodes);
    this.preview.title = t('preview.label', { option: revealText(choice.label) });
    this.previewCaption.textContent = this.preview.title;
    this.preview.scrollTop = 0;
  }

  _otherRow(type, name) {
    const id = uid('opt');
    const textId = uid('other');
    const input = h('input', { type, name, id, value: '' });
    const field = h('input', {
      type: 'text',
      id: textId,
      class: 'other-text',
      placeholder: t('panel.otherPlaceholder'),
      autocomplete: 'off',
    });
    // Typing an answer of one's own selects "Other"; clearing it unselects.
    field.addEventListener('input', () => {
      input.checked = field.value.trim() !== '';
    });
    this.other = { input, field };
    return h(
      'div',
      { class: 'option other' },
      input,
      h('label', { for: id }, h('span', { class: 'opt-label', text: t('panel.other') })),
      h('label', { for: textId, class: 'sr-only', text: t('panel.otherLabel', { question: summary(this.question) || revealText(this.header) }) }),
      field,
    );
  }

  get firstInput() {
    return this.choices.length ? this.choices[0].input : this.freeText;
  }

  /** undefined when unanswered; {error, focus} when half answered. */
  read() {
    if (this.freeText) return this.freeText.value.trim() || undefined;
    const picked = this.choices.filter((c) => c.input.checked).map((c) => c.label);
    let own = null;
    if (this.other.input.checked) {
      own = this.other.field.value.trim();
      if (!own) return { error: t('panel.needOther'), focus: this.other.field };
    }
    if (this.multi) {
      const all = own ? [...picked, own] : picked;
      return all.length ? all : undefined;
    }
    return own ?? picked[0];
  }
}

export class Panel {
  /**
   * @param {string} sessionId
   * @param {object} payload   the ask_user_questions payload
   * @param {{me?: string, onSubmit: (panel: Panel) => void, onExtend: (panel: Panel, seconds: number) => void,
   *          onDecline: (panel: Panel, reason: string | undefined) => void}} actions
   */
  constructor(sessionId, payload, { me, onSubmit, onExtend, onDecline }) {
    this.sessionId = sessionId;
    this.requestId = payload.requestId;
    this.expiresAt = Date.parse(payload.expiresAt);
    this.me = me;
    this.answeredHere = false;
    this.declinedHere = false;
    const questions = Array.isArray(payload.questions) ? payload.questions : [];
    this.fields = questions.map((q) => new QuestionField(q || {}));
    // Plain text for where Markdown cannot show (the note, notifications).
    const [first] = this.fields;
    this.header = revealText(first?.header ?? '');
    this.title = (first && summary(first.question)) || this.header || t('alert.newQuestion');

    const created = Date.parse(payload.createdAt);
    this.timeEl = h('time', { datetime: text(payload.expiresAt) });
    this.leftEl = h('span', { class: 'time-left' }, h('span', { class: 'sr-only', text: t('panel.timeLeftLabel') }), this.timeEl);
    this.statusEl = h('p', { class: 'status', role: 'status' });
    this.submitEl = h('button', { type: 'submit', class: 'submit', text: t('panel.submit', { n: this.fields.length }) });
    this.audienceEl = h('p', { class: 'audience' });
    const decline = this._declineRow(onDecline);
    this.setAudience(payload.to, payload.escalatedTo);
    this.moreEl = h('button', { type: 'button', class: 'link-button more-time', hidden: true });
    this.moreEl.addEventListener('click', () => onExtend(this, this.moreSeconds));
    this.setAllowance(payload.extensionLeftSeconds);
    const head = h(
      'div',
      { class: 'panel-head' },
      Number.isNaN(created) ? null : h('span', { class: 'asked', text: t('panel.asked', { time: formatClock(new Date(created)) }) }),
      h('span', { class: 'clock' }, this.leftEl, this.moreEl),
    );
    this.form = h(
      'form',
      {
        class: 'panel',
        novalidate: true,
        tabindex: '-1',
        'aria-labelledby': this.fields.length ? this.fields[0].legendId : null,
        dataset: { requestId: this.requestId, sessionId },
      },
      head,
      this.audienceEl,
      // Above the questions when any of their texts hides characters (hidden.js).
      anyHidden(questions) ? warningLine() : null,
      this.fields.map((f) => f.fieldset),
      decline,
      h(
        'div',
        { class: 'panel-foot' },
        this.statusEl,
        h('span', { class: 'hint', 'aria-hidden': 'true' }, h('kbd', { text: t('key.ctrl') }), '+', h('kbd', { text: t('key.enter') })),
        this.submitEl,
        this.declineEl, // after Submit: answering stays the next stop from the last field
      ),
    );
    this.form.addEventListener('submit', (event) => {
      event.preventDefault();
      onSubmit(this);
    });
    this.form.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        this.form.requestSubmit();
      }
    });
    this.tick(Date.now());
  }

  /**
   * *Decline* opens a small inline row: an optional reason, then a second
   * click that sends it (a question is not refused by one stray click).
   */
  _declineRow(onDecline) {
    const id = uid('reason');
    this.reasonEl = h('input', { type: 'text', id, maxlength: String(REASON_MAX), autocomplete: 'off', placeholder: t('panel.reasonPlaceholder') });
    const send = h('button', { type: 'button', class: 'decline-send', text: t('panel.declineSend') });
    const keep = h('button', { type: 'button', class: 'link-button', text: t('panel.declineKeep') });
    const whoId = uid('declineWho');
    this.declineWhoEl = h('p', { id: whoId, class: 'decline-who' });
    this.reasonEl.setAttribute('aria-describedby', whoId);
    this.declineBox = h(
      'div',
      { class: 'decline', hidden: true },
      h('label', { for: id, text: t('panel.reasonLabel') }),
      this.declineWhoEl,
      h('div', { class: 'decline-row' }, this.reasonEl, send, keep),
    );
    this.declineEl = h('button', { type: 'button', class: 'link-button decline-open', 'aria-expanded': 'false', text: t('panel.decline') });
    // While the box is open its *Decline question* is the one decline control.
    const toggle = (open) => {
      this.declineBox.hidden = !open;
      this.declineEl.hidden = open;
      this.declineEl.setAttribute('aria-expanded', String(open));
      (open ? this.reasonEl : this.declineEl).focus();
    };
    this.declineEl.addEventListener('click', () => toggle(this.declineBox.hidden));
    keep.addEventListener('click', () => toggle(false));
    // Escape closes the box as *Keep it* does (and goes no further: nothing else on the page closes with it).
    this.declineBox.addEventListener('keydown', (event) => {
      if (event.key !== 'Escape' || event.isComposing) return;
      event.preventDefault();
      event.stopPropagation();
      toggle(false);
    });
    send.addEventListener('click', () => onDecline(this, this.reasonEl.value.trim() || undefined));
    // Enter in the reason declines; it must not submit the form's answers.
    this.reasonEl.addEventListener('keydown', (event) => {
      if (event.key !== 'Enter') return;
      event.preventDefault();
      event.stopPropagation();
      if (!event.isComposing) send.click();
    });
    this.declineSendEl = send;
    return this.declineBox;
  }

  /** Whom the question is asked of now (an escalation step widens it). */
  setAudience(to, escalatedTo) {
    this.audienceEl.textContent = audienceText(to, escalatedTo, this.me);
    // A decline ends the question for its whole audience, not for this person alone.
    const shared = Array.isArray(to) && to.length > 0;
    this.declineWhoEl.textContent = t(shared ? 'panel.declineEndsForAll' : 'panel.declineEnds');
  }

  /** The person's allowance left, in seconds (undefined: the ask gave none): *More time* shows while some is left. */
  setAllowance(leftSeconds) {
    const left = typeof leftSeconds === 'number' && leftSeconds > 0 ? leftSeconds : 0;
    this.moreSeconds = Math.min(left, MORE_TIME_S);
    this.moreEl.hidden = left <= 0;
    this.moreEl.textContent = t('panel.moreTime', { time: formatLeft(this.moreSeconds * 1000) });
  }

  /** {answers} keyed by question text, or {error, focus} to show the user. */
  collect() {
    const answers = {};
    for (const field of this.fields) {
      const value = field.read();
      if (value === undefined) continue;
      if (value && value.error) return value;
      answers[field.question] = value;
    }
    if (!Object.keys(answers).length) {
      return { error: t('panel.needAnswer'), focus: this.fields[0]?.firstInput };
    }
    return { answers };
  }

  /**
   * editing: inputs live; queued: waiting for the connection; sending:
   * sent, waiting for the ack; accepted: the daemon took the answer.
   */
  setState(state, message = '') {
    this.form.dataset.state = state;
    const locked = state !== 'editing';
    const hadFocus = this.form.contains(document.activeElement);
    for (const f of this.fields) f.fieldset.disabled = locked;
    for (const el of [this.submitEl, this.declineEl, this.declineSendEl, this.reasonEl, this.moreEl]) el.disabled = locked;
    if (locked && hadFocus) this.form.focus();
    this.showStatus(message, false);
  }

  /** Whether an answer or a decline is on its way (nothing else may be sent meanwhile). */
  get locked() {
    return (this.form.dataset.state ?? 'editing') !== 'editing';
  }

  showStatus(message, isError) {
    this.statusEl.textContent = message;
    this.statusEl.classList.toggle('error', Boolean(isError));
  }

  /** The question was given more time (askd's ask_user_questions_extended), from any tab or the agent. */
  extendTo(expiresAt, extensionLeftSeconds) {
    this.expiresAt = Date.parse(expiresAt);
    this.timeEl.dateTime = text(expiresAt);
    if (extensionLeftSeconds !== undefined) this.setAllowance(extensionLeftSeconds);
    this.tick(Date.now());
  }

  tick(now) {
    if (Number.isNaN(this.expiresAt)) return;
    const left = this.expiresAt - now;
    this.timeEl.textContent = left > 0 ? t('panel.timeLeft', { time: formatLeft(left) }) : t('panel.timeUp');
    this.leftEl.classList.toggle('urgent', left <= URGENT_MS);
  }
}
