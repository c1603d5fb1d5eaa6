// Receipts (askd's protocol, section 16): askd's signed statement of how a
// question, or an approval, ended, checked the way an executor checks it
// before it acts: offline, with askd's public keys and nothing else.
//
// The signature is the platform's WebCrypto (Ed25519: Node 20+, current
// browsers in a secure context); the digest is SHA-256 of RFC 8785
// canonical JSON, written by the `canonicalize` package (RFC 8785's
// authors'), never by hand here. It is imported only when a digest is
// needed, so a page that loads this package for its inbox, unbundled (as
// askd's own page does), never has to resolve it.
import { AskdError, AskdUnavailable } from './errors.js';
import { baseUrl } from './urls.js';
/** Where askd publishes its receipt keys, relative to its public URL. */
export const JWKS_PATH = '.well-known/jwks.json';
const ALG = 'EdDSA';
const DIGEST_PREFIX = 'sha256:';
const FETCH_TIMEOUT_MS = 10_000;
/** Members every receipt carries (approvals add approved, scope, approvals, approvalsVia). */
const REQUIRED = ['iss', 'iat', 'sid', 'rid', 'status', 'digest', 'endedAt'];
/** A receipt that does not hold; `message` is the one line `askd receipt verify` prints. */
export class ReceiptError extends Error {
    reason;
    name = 'ReceiptError';
    constructor(reason, message) {
        super(message);
        this.reason = reason;
    }
}
/**
 * askd's receipt keys, fetched from its public URL (no token) when first
 * needed and kept; a receipt naming a `kid` the copy lacks fetches them
 * again once before it is refused (a key rotated in since). A fetch that
 * fails is `AskdUnavailable` (unreachable) or `AskdError` (askd refused).
 */
export class ReceiptKeys {
    url;
    fetch;
    copy = null;
    loading = false;
    constructor(url, { fetch: f } = {}) {
        this.url = new URL(JWKS_PATH, baseUrl(url)).href;
        this.fetch = f ?? globalThis.fetch.bind(globalThis);
    }
    /**
     * The JWKS: the kept copy, or a fresh one with `{refresh: true}` (one
     * fetch for every caller that asks while it runs). `signal` gives up
     * waiting; the fetch itself goes on for the others.
     */
    async jwks({ refresh = false, signal } = {}) {
        if (this.copy === null || (refresh && !this.loading)) {
            const fetched = this.load();
            this.copy = fetched;
            this.loading = true;
            fetched.then(() => (this.loading = false), () => {
                this.loading = false;
                if (this.copy === fetched)
                    this.copy = null; // a failed fetch is not kept
            });
        }
        return abortable(this.copy, signal);
    }
    async load() {
        let response;
        try {
            response = await this.fetch(this.url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
        }
        catch (err) {
            throw new AskdUnavailable(this.url, err instanceof Error ? err.message : String(err));
        }
        if (!response.ok) {
            await response.body?.cancel();
            throw new AskdError('http_error', `cannot fetch the JWKS at ${this.url}: HTTP ${response.status}`, response.status);
        }
        let body;
        try {
            body = await response.json();
        }
        catch {
            throw new ReceiptError('bad_jwks', `the JWKS at ${this.url} is not JSON`);
        }
        return asJwks(body);
    }
}
/**
 * Check a receipt: its signature under the key of `jwks` its `kid` names
 * (`alg` pinned to EdDSA: a header naming another is refused), and with
 * `action` (or `questions`) that it is about exactly that. Resolves with
 * the claims; rejects with a `ReceiptError` saying why not. `jwks` is a
 * JWKS you hold (a copy of askd's `/.well-known/jwks.json`) or
 * `ReceiptKeys` that fetch it.
 */
export async function verifyReceipt(receipt, jwks, options = {}) {
    if (options.action !== undefined && options.questions !== undefined) {
        throw new TypeError('verifyReceipt: give action or questions, not both');
    }
    const { head, body, signature, header } = parse(receipt);
    const kid = header.kid;
    if (typeof kid !== 'string' || !kid)
        throw new ReceiptError('malformed', "the receipt's header names no kid");
    if (header.alg !== ALG)
        throw new ReceiptError('bad_signature', `bad signature: alg ${JSON.stringify(header.alg ?? null)}, not ${ALG}`);
    if ('crit' in header) {
        // No extension is understood: RFC 7515 says refuse.
        throw new ReceiptError('malformed', "the receipt's header has crit extensions askd does not know");
    }
    const key = await keyFor(kid, jwks, options.signal);
    let holds = false;
    try {
        holds = await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, ascii(`${head}.${body}`));
    }
    catch {
        holds = false; // a signature of the wrong length, say
    }
    if (!holds)
        throw new ReceiptError('bad_signature', 'bad signature');
    let claims;
    try {
        claims = JSON.parse(utf8(decode(body)));
    }
    catch {
        claims = null;
    }
    if (!isObject(claims))
        throw new ReceiptError('not_a_receipt', 'not an askd receipt: the payload is not a JSON object');
    const missing = REQUIRED.filter((name) => !(name in claims));
    if (missing.length)
        throw new ReceiptError('not_a_receipt', `not an askd receipt: no ${missing.join(', ')}`);
    const checked = claims;
    if (options.action !== undefined) {
        const action = options.action;
        if (!isObject(action) || typeof action.name !== 'string' || !('arguments' in action)) {
            throw new ReceiptError('bad_action', 'the action is not {"name": ..., "arguments": ...}');
        }
        if (checked.approved !== true)
            throw new ReceiptError('not_approved', 'not approved');
        const content = approvalContent(action, checked.scope ?? null);
        if ((await receiptDigest(content)) !== checked.digest) {
            throw new ReceiptError('digest_mismatch', 'digest mismatch: the receipt is for another action or other arguments');
        }
    }
    else if (options.questions !== undefined) {
        const content = questionsContent(options.questions, options.answers ?? null);
        if ((await receiptDigest(content)) !== checked.digest) {
            throw new ReceiptError('digest_mismatch', 'digest mismatch: the receipt is for other questions or other answers');
        }
    }
    return checked;
}
/** What an approval's receipt covers: the action (its final arguments) and the scope granted (`null`: not approved). */
export function approvalContent(action, scope) {
    return { action: { name: action.name, arguments: action.arguments }, scope };
}
/** What a question's receipt covers: the questions as asked and the answers (`null`: none). */
export function questionsContent(questions, answers) {
    return { questions, answers };
}
/**
 * `sha256:<hex>` of the RFC 8785 form of `content`, as askd computes a
 * receipt's `digest`. Strings are taken as a UTF-8 encoder writes them (a
 * lone surrogate as U+FFFD), as askd hashes them.
 */
export async function receiptDigest(content) {
    const { default: canonicalize } = await import('canonicalize');
    const text = canonicalize(wellFormed(content));
    if (text === undefined)
        throw new TypeError('receiptDigest: the content is not JSON');
    const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
    return DIGEST_PREFIX + Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('');
}
const SEGMENT = /^[A-Za-z0-9_-]*$/;
function parse(receipt) {
    if (typeof receipt !== 'string')
        throw new ReceiptError('malformed', 'a receipt is a compact JWS string');
    const parts = receipt.trim().split('.');
    if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p)) || !parts[0] || !parts[2]) {
        throw new ReceiptError('malformed', 'not a compact JWS');
    }
    const [head, body, sig] = parts;
    let header;
    let signature;
    try {
        header = JSON.parse(utf8(decode(head)));
        signature = decode(sig);
    }
    catch {
        throw new ReceiptError('malformed', 'not a compact JWS'); // not base64url, not UTF-8, not JSON
    }
    if (!isObject(header))
        throw new ReceiptError('malformed', 'not a compact JWS');
    return { head, body, signature, header };
}
async function keyFor(kid, jwks, signal) {
    let jwk;
    if (isKeys(jwks)) {
        jwk = find(await jwks.jwks({ signal }), kid);
        if (jwk === undefined)
            jwk = find(await jwks.jwks({ refresh: true, signal }), kid);
    }
    else {
        jwk = find(asJwks(jwks), kid);
    }
    if (jwk === undefined)
        throw new ReceiptError('unknown_kid', `unknown kid ${kid}: no key in the JWKS has it`);
    if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || (jwk.alg ?? ALG) !== ALG) {
        throw new ReceiptError('bad_key', `key ${kid} in the JWKS is not an Ed25519 (EdDSA) key`);
    }
    try {
        if (typeof jwk.x !== 'string' || !SEGMENT.test(jwk.x) || decode(jwk.x).length !== 32)
            throw new Error('not 32 bytes');
        // Only the members that make the key: nothing else of the JWK is trusted.
        return await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
    }
    catch {
        throw new ReceiptError('bad_key', `key ${kid} in the JWKS is malformed`);
    }
}
/** ReceiptKeys, also from another copy of this package (so not by instanceof). */
function isKeys(jwks) {
    return typeof jwks?.jwks === 'function';
}
function abortable(promise, signal) {
    if (!signal)
        return promise;
    if (signal.aborted)
        return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
        promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
}
function find(jwks, kid) {
    return jwks.keys.find((k) => isObject(k) && k.kid === kid);
}
function asJwks(value) {
    if (!isObject(value) || !Array.isArray(value.keys))
        throw new ReceiptError('bad_jwks', 'the JWKS is not {"keys": [...]}');
    return value;
}
function isObject(value) {
    return typeof value === 'object' && value !== null && !Array.isArray(value);
}
/** base64url without padding to bytes (atob: browsers and Node alike). */
function decode(segment) {
    const b64 = segment.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (segment.length % 4)) % 4);
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}
function utf8(bytes) {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}
function ascii(text) {
    return new TextEncoder().encode(text); // the segments are base64url: ASCII
}
// A lone surrogate (a string JSON.parse made from "\ud800") is outside
// I-JSON, which RFC 8785 is defined on: askd hashes it as U+FFFD, the
// replacement character, and so does this. In a `u` regex a well-formed
// pair is one code point, so only lone surrogates match.
const LONE_SURROGATE = /\p{Cs}/gu;
function wellFormed(value) {
    if (typeof value === 'string')
        return value.replace(LONE_SURROGATE, '\uFFFD');
    if (Array.isArray(value))
        return value.map(wellFormed);
    if (isObject(value) && typeof value.toJSON !== 'function') {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k), wellFormed(v)]));
    }
    return value;
}
