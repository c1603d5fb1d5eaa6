// System notifications for new questions while the page is out of sight
// (protocol section 12, browser notifications). The browser's permission is asked only from a click on the
// control, never on load; the on/off choice is kept per browser. A
// requestId this browser already showed, as a panel or as a notification,
// in any tab and before any refresh, never raises another one: a re-push
// after a reconnect or a refresh is not news.

import { t } from './i18n.js';

const PREF_KEY = 'askd.notifications'; // 'on' | 'off'
const SEEN_KEY = 'askd.seen'; // requestIds this browser showed, newest last
const SEEN_MAX = 500; // a bound: requestIds are random, old ones never come back

function load(key, fallback) {
  try {
    const value = localStorage.getItem(key);
    return value === null ? fallback : value;
  } catch {
    return fallback; // storage refused (a privacy mode): this page only
  }
}

function save(key, value) {
  try {
    localStorage.setItem(key, value);
  } catch {
    // storage full or refused: the in-memory copy still holds for this page
  }
}

/** The page is hidden (another tab, minimised) or its window is not focused. */
function outOfSight() {
  return document.visibilityState === 'hidden' || !document.hasFocus();
}

export class Alerts {
  /**
   * @param {HTMLButtonElement} button  the *Turn on notifications* control
   * @param {(requestId: string) => void} reveal  bring a question into view
   */
  constructor(button, reveal) {
    this.button = button;
    this.reveal = reveal;
    this.shown = new Map(); // requestId -> Notification raised by this page
    this.seenHere = new Set();
    this.supported = typeof Notification === 'function';
    this.pref = load(PREF_KEY, 'off');
    button.addEventListener('click', () => this.toggle());
    // Another tab of this browser turned them on or off.
    window.addEventListener('storage', (event) => {
      if (event.key === PREF_KEY) {
        this.pref = event.newValue === 'on' ? 'on' : 'off';
        this.render();
      }
    });
    this.render();
  }

  get enabled() {
    return this.supported && this.pref === 'on' && Notification.permission === 'granted';
  }

  async toggle() {
    if (this.enabled) {
      this.setPref('off');
      return;
    }
    let permission = Notification.permission;
    if (permission === 'default') {
      try {
        permission = await Notification.requestPermission();
      } catch {
        permission = Notification.permission;
      }
    }
    if (permission === 'granted') this.setPref('on');
    else this.render();
  }

  setPref(value) {
    this.pref = value;
    save(PREF_KEY, value);
    this.render();
  }

  render() {
    const b = this.button;
    b.hidden = !this.supported;
    if (!this.supported) return;
    const denied = Notification.permission === 'denied';
    b.disabled = denied;
    b.setAttribute('aria-pressed', String(this.enabled));
    const key = denied ? 'alerts.blocked' : this.enabled ? 'alerts.on' : 'alerts.off';
    b.textContent = t(key);
    b.title = t(`${key}Help`);
  }

  seen(requestId) {
    if (this.seenHere.has(requestId)) return true;
    try {
      const list = JSON.parse(load(SEEN_KEY, '[]'));
      return Array.isArray(list) && list.includes(requestId);
    } catch {
      return false;
    }
  }

  remember(requestId) {
    this.seenHere.add(requestId);
    let list;
    try {
      list = JSON.parse(load(SEEN_KEY, '[]'));
    } catch {
      list = [];
    }
    if (!Array.isArray(list)) list = [];
    if (list.includes(requestId)) return;
    list.push(requestId);
    save(SEEN_KEY, JSON.stringify(list.slice(-SEEN_MAX)));
  }

  /** A question this page shows for the first time. */
  question(requestId, title, body) {
    const known = this.seen(requestId);
    this.remember(requestId);
    if (known || !this.enabled || !outOfSight()) return;
    let note;
    try {
      // The tag makes two tabs of one browser raise one notification.
      note = new Notification(title, { body, tag: `askd-${requestId}` });
    } catch {
      return; // e.g. a browser that allows them only from a service worker
    }
    note.addEventListener('click', () => {
      window.focus();
      this.reveal(requestId);
      note.close();
    });
    note.addEventListener('close', () => {
      if (this.shown.get(requestId) === note) this.shown.delete(requestId);
    });
    this.shown.set(requestId, note);
  }

  /** The question ended: its notification has nothing left to say. */
  ended(requestId) {
    const note = this.shown.get(requestId);
    this.shown.delete(requestId);
    note?.close();
  }
}
