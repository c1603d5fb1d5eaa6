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
import type { Status } from './protocol.js';
import { baseUrl } from './urls.js';

/** Where askd publishes its receipt keys, relative to its public URL. */
export const JWKS_PATH = '.well-known/jwks.json';
const ALG = 'EdDSA';
const DIGEST_PREFIX = 'sha256:';
const FETCH_TIMEOUT_MS = 10_000;
/** Members every receipt carries (approvals add approved, scope, approvals, approvalsVia). */
const REQUIRED = ['iss', 'iat', 'sid', 'rid', 'status', 'digest', 'endedAt'] as const;

/** One public key of askd's JWKS. */
export interface Jwk {
  kty: string;
  crv?: string;
  x?: string;
  kid?: string;
  use?: string;
  alg?: string;
}

/** `GET /.well-known/jwks.json`'s body: the signing key first, then older ones still verifiable. */
export interface Jwks {
  keys: Jwk[];
}

/** A receipt's payload, once its signature holds. */
export interface ReceiptClaims {
  /** askd's `public_url` when set, else `"askd"`. */
  iss: string;
  /** The end time, whole seconds since the epoch. */
  iat: number;
  sid: string;
  rid: string;
  status: Exclude<Status, 'pending'>;
  /** Approvals only: `true` only for `answered`. */
  approved?: boolean;
  /** Approvals only: the scope granted (`null` when not approved). */
  scope?: 'once' | 'always' | null;
  /** The result's `answeredBy`. */
  by: string | null;
  via: 'ws' | 'link' | 'mcp' | 'admin' | null;
  /** Approvals only: the people (user ids) who approved, in order; never `null` (an approval that names nobody is not listed). */
  approvals?: string[];
  /** Approvals only: each approval's `via`, in the order of `approvals` (`mcp`: relayed by the agent's own host). */
  approvalsVia?: Array<'ws' | 'link' | 'mcp' | 'admin'>;
  /** `sha256:` + hex SHA-256 of the RFC 8785 form of what was decided. */
  digest: string;
  /** The end time, RFC 3339 UTC to the millisecond. */
  endedAt: string;
}

/** What an executor is about to run (an approval's `action`, its final arguments). */
export interface ReceiptAction {
  name: string;
  arguments: Record<string, unknown>;
}

/** Why a receipt was refused; `ReceiptError.reason`. */
export type ReceiptRefusal =
  /** Not a compact JWS, no `kid`, or a `crit` header askd never writes. */
  | 'malformed'
  /** The signature does not hold (a tampered header or payload, another key), or `alg` is not EdDSA. */
  | 'bad_signature'
  /** No key of the JWKS has the receipt's `kid` (after fetching it again, for `ReceiptKeys`). */
  | 'unknown_kid'
  /** The JWKS's key with that `kid` is not an Ed25519 public key. */
  | 'bad_key'
  /** What was given as the JWKS is not `{"keys": [...]}`. */
  | 'bad_jwks'
  /** Signed, but the payload lacks a member every askd receipt has. */
  | 'not_a_receipt'
  /** `action` was given and the receipt does not say `approved: true`. */
  | 'not_approved'
  /** The receipt's digest is not that of the given action (or questions and answers). */
  | 'digest_mismatch'
  /** The `action` given to check against is not `{name, arguments}`. */
  | 'bad_action';

/** A receipt that does not hold; `message` is the one line `askd receipt verify` prints. */
export class ReceiptError extends Error {
  override readonly name: string = 'ReceiptError';
  constructor(
    readonly reason: ReceiptRefusal,
    message: string,
  ) {
    super(message);
  }
}

export interface ReceiptKeysOptions {
  /** A `fetch` to use instead of the global one. */
  fetch?: typeof fetch;
}

/**
 * askd's receipt keys, fetched from its public URL (no token) when first
 * needed and kept; a receipt naming a `kid` the copy lacks fetches them
 * again once before it is refused (a key rotated in since). A fetch that
 * fails is `AskdUnavailable` (unreachable) or `AskdError` (askd refused).
 */
export class ReceiptKeys {
  readonly url: string;
  private readonly fetch: typeof fetch;
  private copy: Promise<Jwks> | null = null;
  private loading = false;

  constructor(url: string, { fetch: f }: ReceiptKeysOptions = {}) {
    this.url = new URL(JWKS_PATH, baseUrl(url)).href;
    this.fetch = f ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * The JWKS: the kept copy, or a fresh one with `{refresh: true}` (one
   * fetch for every caller that asks while it runs). `signal` gives up
   * waiting; the fetch itself goes on for the others.
   */
  async jwks({ refresh = false, signal }: { refresh?: boolean; signal?: AbortSignal } = {}): Promise<Jwks> {
    if (this.copy === null || (refresh && !this.loading)) {
      const fetched = this.load();
      this.copy = fetched;
      this.loading = true;
      fetched.then(
        () => (this.loading = false),
        () => {
          this.loading = false;
          if (this.copy === fetched) this.copy = null; // a failed fetch is not kept
        },
      );
    }
    return abortable(this.copy, signal);
  }

  private async load(): Promise<Jwks> {
    let response: Response;
    try {
      response = await this.fetch(this.url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    } catch (err) {
      throw new AskdUnavailable(this.url, err instanceof Error ? err.message : String(err));
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new AskdError('http_error', `cannot fetch the JWKS at ${this.url}: HTTP ${response.status}`, response.status);
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      throw new ReceiptError('bad_jwks', `the JWKS at ${this.url} is not JSON`);
    }
    return asJwks(body);
  }
}

export interface VerifyReceiptOptions {
  /**
   * What the executor is about to run: the receipt must say `approved` and
   * its digest must be that of this action with the receipt's `scope`.
   */
  action?: ReceiptAction;
  /**
   * For a question: the questions as asked (as the listing and the pushed
   * event show them); the digest must be that of them with `answers`.
   */
  questions?: readonly unknown[];
  /** With `questions`: the answers the result carries (absent or `null`: none). */
  answers?: unknown;
  /** Gives up waiting for `ReceiptKeys`' fetch. */
  signal?: AbortSignal;
}

/**
 * Check a receipt: its signature under the key of `jwks` its `kid` names
 * (`alg` pinned to EdDSA: a header naming another is refused), and with
 * `action` (or `questions`) that it is about exactly that. Resolves with
 * the claims; rejects with a `ReceiptError` saying why not. `jwks` is a
 * JWKS you hold (a copy of askd's `/.well-known/jwks.json`) or
 * `ReceiptKeys` that fetch it.
 */
export async function verifyReceipt(
  receipt: string,
  jwks: Jwks | ReceiptKeys,
  options: VerifyReceiptOptions = {},
): Promise<ReceiptClaims> {
  if (options.action !== undefined && options.questions !== undefined) {
    throw new TypeError('verifyReceipt: give action or questions, not both');
  }
  const { head, body, signature, header } = parse(receipt);
  const kid = header.kid;
  if (typeof kid !== 'string' || !kid) throw new ReceiptError('malformed', "the receipt's header names no kid");
  if (header.alg !== ALG) throw new ReceiptError('bad_signature', `bad signature: alg ${JSON.stringify(header.alg ?? null)}, not ${ALG}`);
  if ('crit' in header) {
    // No extension is understood: RFC 7515 says refuse.
    throw new ReceiptError('malformed', "the receipt's header has crit extensions askd does not know");
  }
  const key = await keyFor(kid, jwks, options.signal);
  let holds = false;
  try {
    holds = await crypto.subtle.verify({ name: 'Ed25519' }, key, signature, ascii(`${head}.${body}`));
  } catch {
    holds = false; // a signature of the wrong length, say
  }
  if (!holds) throw new ReceiptError('bad_signature', 'bad signature');

  let claims: unknown;
  try {
    claims = JSON.parse(utf8(decode(body)));
  } catch {
    claims = null;
  }
  if (!isObject(claims)) throw new ReceiptError('not_a_receipt', 'not an askd receipt: the payload is not a JSON object');
  const missing = REQUIRED.filter((name) => !(name in claims));
  if (missing.length) throw new ReceiptError('not_a_receipt', `not an askd receipt: no ${missing.join(', ')}`);
  const checked = claims as unknown as ReceiptClaims;

  if (options.action !== undefined) {
    const action = options.action as unknown;
    if (!isObject(action) || typeof action.name !== 'string' || !('arguments' in action)) {
      throw new ReceiptError('bad_action', 'the action is not {"name": ..., "arguments": ...}');
    }
    if (checked.approved !== true) throw new ReceiptError('not_approved', 'not approved');
    const content = approvalContent(action as unknown as ReceiptAction, checked.scope ?? null);
    if ((await receiptDigest(content)) !== checked.digest) {
      throw new ReceiptError('digest_mismatch', 'digest mismatch: the receipt is for another action or other arguments');
    }
  } else if (options.questions !== undefined) {
    const content = questionsContent(options.questions, options.answers ?? null);
    if ((await receiptDigest(content)) !== checked.digest) {
      throw new ReceiptError('digest_mismatch', 'digest mismatch: the receipt is for other questions or other answers');
    }
  }
  return checked;
}

/** What an approval's receipt covers: the action (its final arguments) and the scope granted (`null`: not approved). */
export function approvalContent(action: ReceiptAction, scope: string | null): unknown {
  return { action: { name: action.name, arguments: action.arguments }, scope };
}

/** What a question's receipt covers: the questions as asked and the answers (`null`: none). */
export function questionsContent(questions: readonly unknown[], answers: unknown): unknown {
  return { questions, answers };
}

/**
 * `sha256:<hex>` of the RFC 8785 form of `content`, as askd computes a
 * receipt's `digest`. Strings are taken as a UTF-8 encoder writes them (a
 * lone surrogate as U+FFFD), as askd hashes them.
 */
export async function receiptDigest(content: unknown): Promise<string> {
  const { default: canonicalize } = await import('canonicalize');
  const text = canonicalize(wellFormed(content));
  if (text === undefined) throw new TypeError('receiptDigest: the content is not JSON');
  const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return DIGEST_PREFIX + Array.from(hash, (b) => b.toString(16).padStart(2, '0')).join('');
}

// ---- the pieces --------------------------------------------------------------

interface Parsed {
  head: string;
  body: string;
  signature: Uint8Array<ArrayBuffer>;
  header: Record<string, unknown>;
}

const SEGMENT = /^[A-Za-z0-9_-]*$/;

function parse(receipt: string): Parsed {
  if (typeof receipt !== 'string') throw new ReceiptError('malformed', 'a receipt is a compact JWS string');
  const parts = receipt.trim().split('.');
  if (parts.length !== 3 || !parts.every((p) => SEGMENT.test(p)) || !parts[0] || !parts[2]) {
    throw new ReceiptError('malformed', 'not a compact JWS');
  }
  const [head, body, sig] = parts as [string, string, string];
  let header: unknown;
  let signature: Uint8Array<ArrayBuffer>;
  try {
    header = JSON.parse(utf8(decode(head)));
    signature = decode(sig);
  } catch {
    throw new ReceiptError('malformed', 'not a compact JWS'); // not base64url, not UTF-8, not JSON
  }
  if (!isObject(header)) throw new ReceiptError('malformed', 'not a compact JWS');
  return { head, body, signature, header };
}

async function keyFor(kid: string, jwks: Jwks | ReceiptKeys, signal?: AbortSignal): Promise<CryptoKey> {
  let jwk: Jwk | undefined;
  if (isKeys(jwks)) {
    jwk = find(await jwks.jwks({ signal }), kid);
    if (jwk === undefined) jwk = find(await jwks.jwks({ refresh: true, signal }), kid);
  } else {
    jwk = find(asJwks(jwks), kid);
  }
  if (jwk === undefined) throw new ReceiptError('unknown_kid', `unknown kid ${kid}: no key in the JWKS has it`);
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || (jwk.alg ?? ALG) !== ALG) {
    throw new ReceiptError('bad_key', `key ${kid} in the JWKS is not an Ed25519 (EdDSA) key`);
  }
  try {
    if (typeof jwk.x !== 'string' || !SEGMENT.test(jwk.x) || decode(jwk.x).length !== 32) throw new Error('not 32 bytes');
    // Only the members that make the key: nothing else of the JWK is trusted.
    return await crypto.subtle.importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, { name: 'Ed25519' }, false, ['verify']);
  } catch {
    throw new ReceiptError('bad_key', `key ${kid} in the JWKS is malformed`);
  }
}

/** ReceiptKeys, also from another copy of this package (so not by instanceof). */
function isKeys(jwks: Jwks | ReceiptKeys): jwks is ReceiptKeys {
  return typeof (jwks as Partial<ReceiptKeys> | null)?.jwks === 'function';
}

function abortable<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

function find(jwks: Jwks, kid: string): Jwk | undefined {
  return jwks.keys.find((k) => isObject(k) && k.kid === kid);
}

function asJwks(value: unknown): Jwks {
  if (!isObject(value) || !Array.isArray(value.keys)) throw new ReceiptError('bad_jwks', 'the JWKS is not {"keys": [...]}');
  return value as unknown as Jwks;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** base64url without padding to bytes (atob: browsers and Node alike). */
function decode(segment: string): Uint8Array<ArrayBuffer> {
  const b64 = segment.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (segment.length % 4)) % 4);
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

function utf8(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

function ascii(text: string): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(text); // the segments are base64url: ASCII
}

// A lone surrogate (a string JSON.parse made from "\ud800") is outside
// I-JSON, which RFC 8785 is defined on: askd hashes it as U+FFFD, the
// replacement character, and so does this. In a `u` regex a well-formed
// pair is one code point, so only lone surrogates match.
const LONE_SURROGATE = /\p{Cs}/gu;

function wellFormed(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(LONE_SURROGATE, '\uFFFD');
  if (Array.isArray(value)) return value.map(wellFormed);
  if (isObject(value) && typeof value.toJSON !== 'function') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [wellFormed(k) as string, wellFormed(v)]));
  }
  return value;
}
