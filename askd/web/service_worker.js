// askd's service worker (docs/web.md, protocol section 23): it keeps the
// inbox page's shell (the page and its static files, nothing else) so that
// the page opens without a network and says it is offline. askd serves this
// file at <prefix>/sw.js with the two values below filled in; its scope is
// the page's folder, <prefix>/.
//
// What it never keeps: a token, an answer link, a question, any reply of the
// API. The shell is the fixed list below, fetched once at install; nothing
// seen later is written to the cache, so an address that carries a secret
// (a link page /a/..., a ?token= the page refuses) never lands in it. The
// last pending questions the page shows offline are the page's own note
// (offline.js), not this cache.

const CACHE_PREFIX = 'askd-shell-';
// askd's version and a digest of the shell's files: an upgrade (or any
// change to the files) makes a new cache, and the old one is deleted when
// this worker takes over.
const CACHE = CACHE_PREFIX + __ASKD_SHELL_VERSION__;
// The shell, relative to this file: './' is the page itself.
const SHELL = __ASKD_SHELL_FILES__;

const SCOPE = new URL('./', self.location.href);
const PAGE = SCOPE.href;
const SHELL_URLS = new Set(SHELL.map((path) => new URL(path, SCOPE).href));

self.addEventListener('install', (event) => {
  // `no-cache`: revalidated with askd, never taken from the HTTP cache of an
  // older version.
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL.map((path) => new Request(new URL(path, SCOPE), { cache: 'no-cache', credentials: 'omit' }))))
      .then(() => self.skipWaiting()),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((names) => Promise.all(names.filter((n) => n.startsWith(CACHE_PREFIX) && n !== CACHE).map((n) => caches.delete(n))))
      .then(() => self.clients.claim()),
  );
});

/** The shell's cache key for a request, or null for anything else (left to the network, untouched). */
function shellKey(request) {
  if (request.method !== 'GET') return null;
  const url = new URL(request.url);
  url.hash = '';
  // The page under any query (?session=, ?lang=) is the one shell file './'.
  if (request.mode === 'navigate') {
    url.search = '';
    return url.href === PAGE ? PAGE : null;
  }
  if (url.search) return null;
  return SHELL_URLS.has(url.href) ? url.href : null;
}

self.addEventListener('fetch', (event) => {
  const key = shellKey(event.request);
  if (key === null) return;
  // The network first, so that an online page is always askd's own; the
  // shell only when askd cannot be reached.
  event.respondWith(
    fetch(event.request).catch(async () => {
      const cached = await caches.match(key, { cacheName: CACHE });
      return cached ?? Response.error();
    }),
  );
});

// Web Push (protocol section 23) adds its `push` and `notificationclick`
// handlers here, below the shell's.
