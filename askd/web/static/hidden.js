// Characters a person cannot see (protocol sections 4 and 17): the
// bidirectional controls, which reorder the text around them, so that
// `cat a ⁧; echo b #⁩` reads as `cat a # echo b ;`, and the zero-width ones,
// which make two texts look alike. The same set as askd/protocol/visible.py
// (tests/web/test_hidden_chars.py holds them to it). Wherever the page shows
// an action, a preview, a question or an option, each such character is
// replaced by a badge naming it (⟨U+2067⟩) and a warning line goes above;
// what is sent back (answers, arguments) keeps the text as it was asked.

import { h } from './dom.js';
import { t } from './i18n.js';

/** The bidirectional controls: embeddings, overrides, isolates, LRM, RLM, ALM. */
export const BIDI_CONTROLS = [0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
/** Drawn as nothing: ZWSP, ZWNJ, ZWJ, word joiner, BOM, and the soft hyphen (drawn only at a line break). */
export const ZERO_WIDTH = [0x00ad, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff];

const HIDDEN = new RegExp(`[${[...BIDI_CONTROLS, ...ZERO_WIDTH].map((c) => `\\u${c.toString(16).padStart(4, '0')}`).join('')}]`, 'gu');

/** ⟨U+2067⟩: one hidden character's visible stand-in. */
export function mark(char) {
  return `⟨U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

export function hasHidden(text) {
  HIDDEN.lastIndex = 0;
  return typeof text === 'string' && HIDDEN.test(text);
}

/** Whether any string in `value` (an object, a list: a question, an action) holds a hidden character. */
export function anyHidden(value) {
  if (typeof value === 'string') return hasHidden(value);
  if (Array.isArray(value)) return value.some(anyHidden);
  if (value && typeof value === 'object') return Object.entries(value).some(([k, v]) => hasHidden(k) || anyHidden(v));
  return false;
}

/** Plain text with its hidden characters as marks (a title, a notification, an editor's text). */
export function revealText(text) {
  return typeof text === 'string' ? text.replace(HIDDEN, mark) : text;
}

function badge(char) {
  return h('span', { class: 'hidden-char', title: t('hidden.badge'), text: mark(char) });
}

/** Text as nodes: the visible runs as text, each hidden character as a badge. */
export function revealNodes(text) {
  const nodes = [];
  let last = 0;
  HIDDEN.lastIndex = 0;
  for (const found of text.matchAll(HIDDEN)) {
    if (found.index > last) nodes.push(document.createTextNode(text.slice(last, found.index)));
    nodes.push(badge(found[0]));
    last = found.index + found[0].length;
  }
  if (last < text.length) nodes.push(document.createTextNode(text.slice(last)));
  return nodes;
}

/**
 * Replace, under `root` (an element or a fragment), every hidden character
 * of its text by a badge, and of its title attributes by a mark. Returns
 * whether there was any.
 */
export function revealIn(root) {
  let found = false;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (hasHidden(node.data)) texts.push(node);
  }
  for (const node of texts) {
    found = true;
    node.replaceWith(...revealNodes(node.data));
  }
  for (const el of root.querySelectorAll('[title]')) {
    const title = el.getAttribute('title');
    if (hasHidden(title)) {
      found = true;
      el.setAttribute('title', revealText(title));
    }
  }
  return found;
}

/** The warning line above a text that holds hidden characters. */
export function warningLine() {
  return h('p', { class: 'hidden-warning', role: 'note', text: t('hidden.warning') });
}

/**
 * JSON text for an editor: each hidden character inside a string written as
 * its JSON escape (`\u2067`), which a textarea shows and JSON.parse reads
 * back as the same character, so the arguments approved are the ones asked.
 */
export function escapeInJson(text) {
  return text.replace(HIDDEN, (c) => `\\u${c.codePointAt(0).toString(16).padStart(4, '0')}`);
}
