// The page's language: one catalogue per language (static/i18n/*.json),
// picked from ?lang= and then navigator.languages by RFC 4647 lookup with
// the aliases of static/languages.json (the server's askd.web.languages
// reads the same file). Numbers, clock times, countdowns, lists and plurals go
// through Intl in the chosen language, never the browser's default.

const LANGUAGES_URL = new URL('./languages.json', import.meta.url);

let lang = 'en';
let catalogue = {};
let plurals = new Intl.PluralRules('en');
let numbers = new Intl.NumberFormat('en');
let twoDigits = new Intl.NumberFormat('en', { minimumIntegerDigits: 2, useGrouping: false });
let clock = new Intl.DateTimeFormat('en', { hour: '2-digit', minute: '2-digit' });
let lists = new Intl.ListFormat('en', { type: 'conjunction' });
let dateTimes = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });

/** The supported language for a list of BCP 47 tags, most wanted first. */
export function pickLanguage(wanted, config) {
  const supported = new Map(Object.keys(config.languages).map((tag) => [tag.toLowerCase(), tag]));
  for (const tag of wanted) {
    if (typeof tag !== 'string') continue;
    let range = tag.trim().toLowerCase();
    while (range) {
      if (supported.has(range)) return supported.get(range);
      if (range in config.aliases) return config.aliases[range];
      const cut = range.lastIndexOf('-');
      range = cut > 0 ? range.slice(0, cut) : '';
    }
  }
  return config.default;
}

async function getJson(url) {
  const r = await fetch(url, { cache: 'no-cache' });
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return r.json();
}

/** Choose the language and load its catalogue; call once before drawing. */
export async function loadLanguage(params) {
  const config = await getJson(LANGUAGES_URL);
  const wanted = [params.get('lang'), ...(navigator.languages ?? [navigator.language])];
  lang = pickLanguage(wanted, config);
  try {
    catalogue = await getJson(new URL(`./i18n/${lang}.json`, import.meta.url));
  } catch (err) {
    console.warn('askd:', err);
    lang = config.default;
    catalogue = await getJson(new URL(`./i18n/${lang}.json`, import.meta.url));
  }
  plurals = new Intl.PluralRules(lang);
  numbers = new Intl.NumberFormat(lang);
  twoDigits = new Intl.NumberFormat(lang, { minimumIntegerDigits: 2, useGrouping: false });
  clock = new Intl.DateTimeFormat(lang, { hour: '2-digit', minute: '2-digit' });
  lists = new Intl.ListFormat(lang, { type: 'conjunction' });
  dateTimes = new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' });
  document.documentElement.lang = lang;
}

export function language() {
  return lang;
}

/**
 * The catalogue's text for `key`, with {name} filled from `vars`. A
 * plural entry ({one, other, ...}) is chosen by Intl.PluralRules on
 * `vars.n`, which is also formatted as a number.
 */
export function t(key, vars = {}) {
  let entry = catalogue[key];
  if (entry === undefined) {
    console.warn('askd: no text for', key);
    return key;
  }
  const filled = { ...vars };
  if (typeof entry === 'object') {
    entry = entry[plurals.select(vars.n)] ?? entry.other;
    filled.n = numbers.format(vars.n);
  }
  return entry.replace(/\{(\w+)\}/g, (m, name) => (name in filled ? String(filled[name]) : m));
}

/** `t(key)` as nodes: {name} placeholders become the given nodes. */
export function tNodes(key, slots) {
  return t(key)
    .split(/(\{\w+\})/)
    .filter(Boolean)
    .map((part) => {
      const slot = /^\{(\w+)\}$/.exec(part);
      return slot && slots[slot[1]] ? slots[slot[1]] : document.createTextNode(part);
    });
}

/**
 * Fill the static page: `data-i18n="key"` sets an element's text, its
 * `data-slot` children filling the key's placeholders;
 * `data-i18n-ATTR="key"` sets an attribute.
 */
export function translatePage(root = document) {
  for (const el of root.querySelectorAll('[data-i18n]')) {
    const slots = {};
    for (const child of el.querySelectorAll(':scope > [data-slot]')) slots[child.dataset.slot] = child;
    el.replaceChildren(...tNodes(el.dataset.i18n, slots));
  }
  for (const el of root.querySelectorAll('*')) {
    for (const { name, value } of [...el.attributes]) {
      if (name.startsWith('data-i18n-')) el.setAttribute(name.slice('data-i18n-'.length), t(value));
    }
  }
}

/** "4:05", "1:02:09": the time left, for a countdown. */
export function formatLeft(ms) {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const s = twoDigits.format(total % 60);
  const m = Math.floor(total / 60) % 60;
  const hours = Math.floor(total / 3600);
  return hours ? `${numbers.format(hours)}:${twoDigits.format(m)}:${s}` : `${numbers.format(m)}:${s}`;
}

/** "14:02": a local clock time. */
export function formatClock(date) {
  return clock.format(date);
}

/** "2 Dec 2026, 14:02": a local date and time. */
export function formatDateTime(date) {
  return dateTimes.format(date);
}

/** "alice, bob and oncall": names joined as the language joins them. */
export function formatList(items) {
  return lists.format(items);
}
