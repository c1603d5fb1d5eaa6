// The page's token: where it comes from (askd open's one-time `#code=`, or
// this browser's storage) and what it claims (for display only).

import { t } from './i18n.js';
import { AskdError, redeemLocationCode } from './vendor/askd-client/index.js';

export const TOKEN_KEY = 'askd.token';

/** The token's claims, for display only (the daemon does the checking). */
export function claims(token) {
  try {
    const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    return JSON.parse(atob(part.padEnd(Math.ceil(part.length / 4) * 4, '=')));
  } catch {
    return {};
  }
}

/**
 * The page's token: a `#code=` in the address (askd open's one-time code,
 * redeemed by the client's redeemLocationCode, the way any page built on
 * askd-client signs in), else this browser's storage. A redeemed token is
 * kept per browser (localStorage), so a link without one opens a working
 * inbox. A token in the address itself (`?token=`, `#token=`) is not read:
 * the browser had already written that address into its history, session
 * and favicon files; it is taken out of the address bar and the page says why.
 */
export async function takeToken(params) {
  const hash = new URLSearchParams(location.hash.slice(1));
  const urlToken = params.has('token') || hash.has('token');
  if (urlToken) {
    params.delete('token');
    hash.delete('token');
    const query = params.toString();
    const fragment = hash.toString();
    history.replaceState(history.state, '', `${location.pathname}${query ? `?${query}` : ''}${fragment ? `#${fragment}` : ''}`);
  }
  let failed;
  try {
    const opened = await redeemLocationCode();
    if (opened) {
      localStorage.setItem(TOKEN_KEY, opened.token);
      return { token: opened.token };
    }
  } catch (err) {
    failed = err;
  }
  const stored = localStorage.getItem(TOKEN_KEY);
  if (stored) return { token: stored };
  // Worded once the language is loaded (after this, so the address is clean first).
  if (failed) return { error: () => t('token.linkFailed', { why: failed instanceof AskdError ? failed.message : t('token.unreachable') }) };
  return { error: () => (urlToken ? t('token.inAddress', { cmd: '`askd open --user YOU`' }) : '') };
}
