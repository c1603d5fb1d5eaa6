// Question Markdown to safe DOM. The rules match the server's
// askd/web/markdown.py (markdown-it-py ports this markdown-it), so one text
// renders to one HTML on both: CommonMark with tables and strikethrough,
// raw HTML shown as text, links only to http/https/mailto (new tab, no
// opener, no referrer), images as links never loaded, diff lines marked.
// DOMPurify then checks the output against a short allowlist: a second
// lock in case a rule above is ever wrong.

import './vendor/markdown-it.min.js'; // sets globalThis.markdownit
import DOMPurify from './vendor/purify.es.js';
import { h } from './dom.js';
import { revealIn, revealText } from './hidden.js';
import { t } from './i18n.js';

const SAFE_URL = /^(?:https?|mailto):/i;
const LINK_REL = 'noopener noreferrer';

function diffLine(line, escape) {
  let kind = null;
  if (line.startsWith('+++') || line.startsWith('---')) kind = 'diff-file';
  else if (line.startsWith('+')) kind = 'diff-add';
  else if (line.startsWith('-')) kind = 'diff-del';
  else if (line.startsWith('@@')) kind = 'diff-hunk';
  return kind ? `<span class="${kind}">${escape(line)}</span>` : escape(line);
}

function parser() {
  const md = globalThis.markdownit('commonmark', {
    html: false,
    // '' lets markdown-it escape the text as it is.
    highlight: (content, lang) =>
      lang.toLowerCase() === 'diff' ? content.split('\n').map((l) => diffLine(l, md.utils.escapeHtml)).join('\n') : '',
  }).enable(['table', 'strikethrough']);
  md.validateLink = (url) => SAFE_URL.test(url.trim());
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx].attrSet('target', '_blank');
    tokens[idx].attrSet('rel', LINK_REL);
    return self.renderToken(tokens, idx, options);
  };
  // Table alignment comes as style="text-align:…", which the page's CSP
  // (no inline style) refuses: a class says it instead.
  md.renderer.rules.th_open = md.renderer.rules.td_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const style = token.attrGet('style');
    if (style) {
      token.attrs = token.attrs.filter(([name]) => name !== 'style');
      token.attrJoin('class', `align-${style.slice('text-align:'.length)}`);
    }
    return self.renderToken(tokens, idx, options);
  };
  md.renderer.rules.image = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const src = token.attrGet('src') ?? '';
    const alt = self.renderInlineAsText(token.children ?? [], options, env) || src;
    const esc = md.utils.escapeHtml;
    return `<a href="${esc(src)}" target="_blank" rel="${LINK_REL}" class="md-image">${esc(alt)}</a>`;
  };
  return md;
}

const md = parser();

/** Markdown source to an HTML string (what the server's renderer gives). */
export function renderHtml(text) {
  return md.render(text);
}

const SUMMARY_MAX = 140;
// A sentence ends at . ! ? (then a space or the end) or at a CJK full stop.
const SENTENCE = /^(.+?(?:[.!?](?=\s|$)|[。！？]))/su;

/** One inline token's text as a reader sees it: no markup, breaks as spaces. */
function inlineText(children) {
  return children
    .map((c) => {
      if (c.type === 'softbreak' || c.type === 'hardbreak') return ' ';
      if (c.type === 'image') return inlineText(c.children ?? []) || c.attrGet('src') || '';
      return c.type === 'text' || c.type === 'code_inline' ? c.content : '';
    })
    .join('');
}

/**
 * Markdown as one short line of plain text, for where markup cannot show
 * (a closed panel's note, a notification, a screen reader's announcement):
 * the first paragraph, heading, list item or cell, code blocks skipped, cut
 * at its first sentence and at SUMMARY_MAX characters. '' when the text
 * is nothing but code. Hidden characters come as marks (⟨U+2067⟩).
 */
export function summary(text) {
  for (const token of md.parse(text, {})) {
    if (token.type !== 'inline') continue;
    const line = revealText(inlineText(token.children ?? [])).replace(/\s+/g, ' ').trim();
    if (!line) continue;
    const sentence = SENTENCE.exec(line)?.[1] ?? line;
    return sentence.length > SUMMARY_MAX ? `${sentence.slice(0, SUMMARY_MAX - 1).trimEnd()}…` : sentence;
  }
  return '';
}

const PURIFY = {
  ALLOWED_TAGS: [
    'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'ul', 'ol', 'li', 'pre', 'code',
    'em', 'strong', 's', 'a', 'span', 'table', 'thead', 'tbody', 'tr', 'th', 'td',
  ],
  ALLOWED_ATTR: ['href', 'title', 'target', 'rel', 'class', 'start'],
  // DOMPurify holds every attribute outside its URI-safe list to
  // ALLOWED_URI_REGEXP, so `_blank`, `noopener noreferrer` and `3` (no
  // scheme) were dropped: these three are never URLs.
  ADD_URI_SAFE_ATTR: ['target', 'rel', 'start'],
  ALLOWED_URI_REGEXP: SAFE_URL,
  RETURN_DOM_FRAGMENT: true,
};

function copyButton(pre) {
  const button = h('button', { type: 'button', class: 'copy', text: t('code.copy') });
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(pre.textContent);
      button.textContent = t('code.copied');
    } catch {
      // No clipboard outside a secure context: select the text instead.
      getSelection().selectAllChildren(pre);
      button.textContent = t('code.copyFailed');
    }
    setTimeout(() => {
      button.textContent = t('code.copy');
    }, 2000);
  });
  return button;
}

/**
 * Markdown source as a sanitised fragment, code blocks with a copy button,
 * each hidden character a badge (hidden.js: copying a block copies the
 * marks, never a reordering character).
 * `tabbable`: code blocks take keyboard focus to scroll their long lines
 * (not inside a preview, which scrolls as a whole).
 */
export function renderNodes(text, { tabbable = true } = {}) {
  const fragment = DOMPurify.sanitize(renderHtml(text), PURIFY);
  revealIn(fragment);
  for (const pre of fragment.querySelectorAll('pre')) {
    const box = h('div', { class: 'code' });
    pre.replaceWith(box);
    if (tabbable) pre.tabIndex = 0;
    box.append(copyButton(pre), pre);
  }
  return fragment;
}
