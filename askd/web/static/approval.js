// One action waiting for approval (protocol section 17): what will run (the
// action's name), why (its summary, Markdown), what it will change (its
// preview, Markdown: a ```diff block shows added and removed lines), the
// arguments as formatted JSON, and *Approve*, *Approve always* (when the
// action offers it) and *Deny* with an optional reason. An `editable`
// action's arguments are a JSON editor, checked in place against the
// action's schema (askd checks again); *Approve* waits for valid JSON.
// A quorum shows "1 of 2 approvals: alice", live.

import { h, uid } from './dom.js';
import { anyHidden, escapeInJson, revealNodes, revealText, warningLine } from './hidden.js';
import { formatList, t } from './i18n.js';
import { renderNodes, summary } from './markdown.js';
import { Panel } from './panel.js';
import { Validator } from './vendor/json-schema/index.js';

// Keywords that only wrap the error under them: the leaf says what is wrong.
const WRAPPERS = new Set(['properties', 'items', 'prefixItems', 'allOf', '$ref', 'dependentSchemas', 'unevaluatedProperties', 'additionalProperties', 'patternProperties']);

const pretty = (value) => JSON.stringify(value, null, 2);
const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A checker of `schema` (draft 2020-12), or null when the browser cannot compile it (askd still checks). */
function checker(schema) {
  if (!isObject(schema) && typeof schema !== 'boolean') return null;
  try {
    const validator = new Validator(schema, '2020-12', false);
    return (value) => validator.validate(value);
  } catch {
    return null;
  }
}

/** The most telling error of a failed check: the first leaf, with where it is ("arguments/env"). */
function schemaError(errors) {
  const leaf = errors.find((e) => !WRAPPERS.has(e.keyword)) ?? errors[0];
  const where = decodeURIComponent(String(leaf?.instanceLocation ?? '#').replace(/^#/, ''));
  return t('approval.schemaError', { where: `arguments${where}`, message: leaf?.error ?? '' });
}

export class ApprovalPanel extends Panel {
  /**
   * @param {string} sessionId
   * @param {object} payload   the ask_user_questions payload, with `action`, `quorum`, `approvals`
   * @param {{me?: string, onApprove: (panel: ApprovalPanel, options: object) => void, onExtend: Function, onDecline: Function}} actions
   */
  constructor(sessionId, payload, { me, onApprove, onExtend, onDecline }) {
    super(sessionId, { ...payload, questions: [] }, { me, onExtend, onDecline, onSubmit: (p) => p.approveWith('once') });
    const action = isObject(payload.action) ? payload.action : {};
    this.action = action;
    this.onApprove = onApprove;
    this.voted = false; // this user's approval is in: only *Deny* is left
    this.header = t('approval.chip');
    const name = typeof action.name === 'string' ? action.name : '';
    const why = typeof action.summary === 'string' ? action.summary : '';
    this.title = summary(why) || revealText(name);
    this.form.classList.add('approval');

    const nameId = uid('action');
    const body = h(
      'div',
      { class: 'action' },
      h('h3', { class: 'action-head', id: nameId }, h('span', { class: 'chip', text: t('approval.chip') }), h('code', { class: 'action-name' }, revealNodes(name))),
      why ? h('div', { class: 'qtext md action-summary' }, renderNodes(why)) : null,
      this._preview(action.preview, revealText(name)),
      this._arguments(action, revealText(name)),
    );
    this.progressEl = h('p', { class: 'progress', role: 'status' });
    this.form.setAttribute('aria-labelledby', nameId);
    // What will run may read otherwise than it runs (a bidirectional control): say so above it.
    const hidden = anyHidden([action.name, action.summary, action.preview, action.arguments]) ? warningLine() : null;
    this.audienceEl.after(...[hidden, body, this.progressEl].filter(Boolean));

    // The footer's buttons: *Approve* is the form's submit; *Approve always* where offered; *Deny*.
    this.submitEl.textContent = t('approval.approve');
    this.alwaysEl = h('button', { type: 'button', class: 'submit secondary always', text: t('approval.always'), hidden: action.allowAlways !== true });
    this.alwaysEl.addEventListener('click', () => this.approveWith('always'));
    this.submitEl.after(this.alwaysEl);
    this.declineEl.textContent = t('approval.deny');
    this.declineSendEl.textContent = t('approval.denySend');
    this.declineBox.querySelector('label').textContent = t('approval.reasonLabel');
    this.reasonEl.placeholder = t('approval.reasonPlaceholder');
    this.setApprovals(payload.approvals, payload.quorum);
    this.check();
  }

  /**
   * The preview, a focusable region named for its action ("What deploy will
   * change": two approvals' previews are two different landmarks). A
   * preview that is one code block (a diff) has its *Copy* in the caption's
   * row, not on a row of its own.
   */
  _preview(preview, name) {
    if (typeof preview !== 'string' || !preview) return null;
    const body = h('div', { class: 'preview-body md' }, renderNodes(preview, { tabbable: false }));
    const head = h('div', { class: 'preview-head' }, h('div', { class: 'preview-caption', 'aria-hidden': 'true', text: t('approval.preview') }));
    const blocks = body.querySelectorAll(':scope > .code');
    if (blocks.length === 1 && body.childElementCount === 1) head.append(blocks[0].querySelector('.copy'));
    return h(
      'div',
      { class: 'preview action-preview', role: 'region', tabindex: '0', 'aria-label': t('approval.previewOf', { name }) },
      head,
      body,
    );
  }

  _arguments(action, name) {
    const args = isObject(action.arguments) ? action.arguments : {};
    const id = uid('args');
    if (action.editable !== true) {
      this.editor = null;
      // A focusable region named for its action, so a keyboard scrolls it; *Wrap lines* shows long lines whole.
      const json = h('pre', { class: 'args-json', tabindex: '0', role: 'region', 'aria-label': t('approval.argumentsOf', { name }) }, h('code', {}, revealNodes(pretty(args))));
      const wrap = h('button', { type: 'button', class: 'link-button wrap-toggle', 'aria-pressed': 'false', text: t('approval.wrap') });
      wrap.addEventListener('click', () => {
        const on = json.classList.toggle('wrapped');
        wrap.setAttribute('aria-pressed', String(on));
      });
      return h('div', { class: 'args' }, h('div', { class: 'args-head' }, h('div', { class: 'args-label', id, 'aria-hidden': 'true', text: t('approval.arguments') }), wrap), json);
    }
    this.validate = checker(action.schema);
    const text = escapeInJson(pretty(args));
    const errorId = uid('argsError');
    this.editor = h('textarea', {
      id,
      class: 'args-edit',
      rows: String(Math.min(16, Math.max(3, text.split('\n').length))),
      spellcheck: 'false',
      autocomplete: 'off',
      autocapitalize: 'off',
      'aria-describedby': errorId,
    });
    this.editor.value = text;
    this.argsErrorEl = h('p', { class: 'args-error', id: errorId, 'aria-live': 'polite' });
    this.editor.addEventListener('input', () => this.check());
    return h(
      'div',
      { class: 'args' },
      h('label', { class: 'args-label', for: id, text: t('approval.editArguments') }),
      this.editor,
      this.argsErrorEl,
    );
  }

  /** The editor's arguments: {value} when valid JSON that fits the schema, else {error}. */
  read() {
    if (!this.editor) return { value: undefined };
    let value;
    try {
      value = JSON.parse(this.editor.value);
    } catch (err) {
      return { error: t('approval.parseError', { message: err.message }) };
    }
    if (!isObject(value)) return { error: t('approval.notObject') };
    const result = this.validate?.(value);
    if (result && !result.valid) return { error: schemaError(result.errors) };
    return { value };
  }

  /** Show the editor's error in place; *Approve* is enabled only when there is none. */
  check() {
    const { error } = this.read();
    if (this.editor) {
      this.argsErrorEl.textContent = error ?? '';
      this.editor.setAttribute('aria-invalid', String(Boolean(error)));
    }
    const blocked = this.locked || this.voted || Boolean(error);
    this.submitEl.disabled = blocked;
    this.alwaysEl.disabled = blocked;
    return !error;
  }

  approveWith(scope) {
    const { value, error } = this.read();
    if (error || this.locked || this.voted) return;
    this.onApprove(this, { ...(value === undefined ? {} : { arguments: value }), ...(scope === 'always' ? { scope } : {}) });
  }

  /** One denial ends an approval for everyone, whatever its quorum. */
  setAudience(to, escalatedTo) {
    super.setAudience(to, escalatedTo);
    this.declineWhoEl.textContent = t('approval.denyEnds');
  }

  /** The approvals so far (askd's re-push, ask_user_questions_voted, or an ack): "1 of 2 approvals: alice". */
  setApprovals(approvals, needed) {
    const given = Array.isArray(approvals) ? approvals : [];
    const quorum = typeof needed === 'number' && needed > 0 ? needed : 1;
    if (given.some((a) => a && a.by === this.me && this.me !== undefined)) this.voted = true;
    this.progressEl.hidden = quorum < 2 && !given.length;
    const who = formatList(given.map((a) => (a?.by === null || a?.by === undefined ? t('approval.admin') : a.by === this.me ? t('panel.you') : a.by)));
    this.progressEl.textContent = given.length
      ? t('approval.progress', { n: quorum, count: given.length, who })
      : t('approval.progressNone', { n: quorum });
    if (this.voted) this.showVoted();
  }

  /** askd took this user's approval and waits for more (or had it already). */
  showVoted(already = false) {
    this.voted = true;
    this.setState('editing');
    this.showStatus(t(already ? 'approval.alreadyVoted' : 'approval.waiting'), false);
  }

  setState(state, message = '') {
    super.setState(state, message);
    if (this.editor) this.editor.readOnly = state !== 'editing' || this.voted;
    this.check();
  }
}
