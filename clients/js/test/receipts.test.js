// verifyReceipt: real receipts, from a real askd (a question's) and from
// askd's own signer (an approval's, which askd does not ask yet), checked
// and refused for every reason an executor must refuse one.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { Agent, AskdError, AskdUnavailable, Inbox, ReceiptError, ReceiptKeys, receiptDigest, verifyReceipt } from '../dist/index.js';
import { Askd, next } from './askd.js';

// askd's JWKS for test/askd.js's secret (the key derives from it), and
// approval receipts askd.receipts.sign made under it for ACTION (Python:
// receipt_claims(..., approval={...}) with digest(approval_content(ACTION, scope))).
const JWKS = {
  keys: [
    {
      kty: 'OKP',
      crv: 'Ed25519',
      x: 'skE723hf9CEX3V0P6FZHqxawIIQ9Y6prAIaJiPXByaE',
      kid: 's1KeLxTOPAnNZtP9lNZw4DFoj-Lde-waz0Xe17un6yw',
      use: 'sig',
      alg: 'EdDSA',
    },
  ],
};
const KID = JWKS.keys[0].kid;
const ACTION = {
  name: 'deploy',
  arguments: { env: 'prod', replicas: 3, note: 'café 🚀', big: 1152921504606846976, f: 1.5e-7, list: [true, null, { z: 1, a: 2 }] },
};
const APPROVED =
  'eyJhbGciOiJFZERTQSIsImtpZCI6InMxS2VMeFRPUEFuTlp0UDlsTlp3NERGb2otTGRlLXdhejBYZTE3dW42eXciLCJ0eXAiOiJKV1QifQ.eyJpc3MiOiJodHRwczovL3Rvb2xzLmV4YW1wbGUuY29tL2Fza2QvIiwiaWF0IjoxNzk2MjA1NjAwLCJzaWQiOiJkZXBsb3ktNDIiLCJyaWQiOiJyLWFwcHJvdmUiLCJzdGF0dXMiOiJhbnN3ZXJlZCIsImFwcHJvdmVkIjp0cnVlLCJzY29wZSI6Im9uY2UiLCJieSI6ImFsaWNlIiwidmlhIjoid3MiLCJhcHByb3ZhbHMiOlsiYWxpY2UiXSwiZGlnZXN0Ijoic2hhMjU2OmYwNjVlMzE1ZGQ3MjUxNmY5NGYzY2YyOTQ5NDJiYTZiMzNkNDAyNmU4YTRmODUyNmExYTI1NDMxOGNkOWIwNDMiLCJlbmRlZEF0IjoiMjAyNi0xMi0wMlQxMDowMDowMC4yNTBaIn0.T3wsmLiZ7W_iWL8W6SCVbCL4tYRc2LamIAjmKyX4ULWI4o-VBp5jzdOBnqYJF_Fj-5yaQ2WT7YVT93YGk8kaCA';
const ALWAYS =
  'eyJhbGciOiJFZERTQSIsImtpZCI6InMxS2VMeFRPUEFuTlp0UDlsTlp3NERGb2otTGRlLXdhejBYZTE3dW42eXciLCJ0eXAiOiJKV1QifQ.eyJpc3MiOiJodHRwczovL3Rvb2xzLmV4YW1wbGUuY29tL2Fza2QvIiwiaWF0IjoxNzk2MjA1NjAwLCJzaWQiOiJkZXBsb3ktNDIiLCJyaWQiOiJyLWFwcHJvdmUiLCJzdGF0dXMiOiJhbnN3ZXJlZCIsImFwcHJvdmVkIjp0cnVlLCJzY29wZSI6ImFsd2F5cyIsImJ5IjoiYm9iIiwidmlhIjoibGluayIsImFwcHJvdmFscyI6WyJhbGljZSIsImJvYiJdLCJkaWdlc3QiOiJzaGEyNTY6MjZkNjI5ZGJkZDYwYmNiM2I4MWY3Nzc2Y2MyOTk4ZGU2M2U0MzQwMmJiNWM4YjYzYTZjMWQzYzMxOGVmNDE0MSIsImVuZGVkQXQiOiIyMDI2LTEyLTAyVDEwOjAwOjAwLjI1MFoifQ.hpgIDmKoluTlCo8Co5So5qA_0N6VSbq9P4kzDClQoNpDSrWJ2rqh76UUlzolybmIqtsKtlf7ZkAvAw1-eJqSCQ';
const DENIED =
  'eyJhbGciOiJFZERTQSIsImtpZCI6InMxS2VMeFRPUEFuTlp0UDlsTlp3NERGb2otTGRlLXdhejBYZTE3dW42eXciLCJ0eXAiOiJKV1QifQ.eyJpc3MiOiJodHRwczovL3Rvb2xzLmV4YW1wbGUuY29tL2Fza2QvIiwiaWF0IjoxNzk2MjA1NjAwLCJzaWQiOiJkZXBsb3ktNDIiLCJyaWQiOiJyLWFwcHJvdmUiLCJzdGF0dXMiOiJkZWNsaW5lZCIsImFwcHJvdmVkIjpmYWxzZSwic2NvcGUiOm51bGwsImJ5IjoiYm9iIiwidmlhIjoid3MiLCJhcHByb3ZhbHMiOlsiYWxpY2UiXSwiZGlnZXN0Ijoic2hhMjU2OmNhN2FmZTdmZWJiYjNhNTViOTU3NmM4NjFmMTNmZjkzZmNhMzU4YWNlZWE2N2YxMzdmMDA2ODE1ZTBmZWQ5NWYiLCJlbmRlZEF0IjoiMjAyNi0xMi0wMlQxMDowMDowMC4yNTBaIn0.VE8gGLflqfyEHJ8iwygH_WU-RdEkliTo32uFCxdn0F2sg0zZWcvSxWZzUi_L0MzbzDsm2w3H3d2qkbC3UbNzCg';

const b64url = (text) => Buffer.from(text).toString('base64url');
const fromB64url = (segment) => JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));

/** The receipt with its header or payload replaced (the signature kept). */
function tampered(receipt, { header, payload }) {
  const [h, p, s] = receipt.split('.');
  return [header ? b64url(JSON.stringify(header(fromB64url(h)))) : h, payload ? b64url(JSON.stringify(payload(fromB64url(p)))) : p, s].join('.');
}

/** Rejects with a ReceiptError whose reason is `reason`. */
async function refused(promise, reason, message) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof ReceiptError, `not a ReceiptError: ${err}`);
    assert.equal(err.reason, reason, err.message);
    if (message) assert.match(err.message, message);
    return true;
  });
}

/** Another Ed25519 key's JWK, under `kid`. */
async function otherKey(kid) {
  const pair = await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify']);
  const { x } = await crypto.subtle.exportKey('jwk', pair.publicKey);
  return { kty: 'OKP', crv: 'Ed25519', x, kid, use: 'sig', alg: 'EdDSA' };
}

describe('approval receipts askd signed', () => {
  test('one that approves exactly the action to run verifies, whatever the key order', async () => {
    const claims = await verifyReceipt(APPROVED, JWKS, { action: ACTION });
    assert.deepEqual(
      { ...claims },
      {
        iss: 'https://tools.example.com/askd/',
        iat: 1796205600,
        sid: 'deploy-42',
        rid: 'r-approve',
        status: 'answered',
        approved: true,
        scope: 'once',
        by: 'alice',
        via: 'ws',
        approvals: ['alice'],
        digest: 'sha256:f065e315dd72516f94f3cf294942ba6b33d4026e8a4f8526a1a254318cd9b043',
        endedAt: '2026-12-02T10:00:00.250Z',
      },
    );
    const reordered = { arguments: Object.fromEntries(Object.entries(ACTION.arguments).reverse()), name: 'deploy' };
    assert.equal((await verifyReceipt(APPROVED, JWKS, { action: reordered })).digest, claims.digest);
    const always = await verifyReceipt(ALWAYS, JWKS, { action: ACTION }); // the digest covers its scope
    assert.deepEqual([always.scope, always.approvals], ['always', ['alice', 'bob']]);
  });

  test('other arguments, another name, or a scope it did not grant: digest mismatch', async () => {
    const edited = { ...ACTION, arguments: { ...ACTION.arguments, replicas: 30 } };
    await refused(verifyReceipt(APPROVED, JWKS, { action: edited }), 'digest_mismatch', /^digest mismatch: /);
    await refused(verifyReceipt(APPROVED, JWKS, { action: { ...ACTION, name: 'destroy' } }), 'digest_mismatch');
    // ALWAYS's payload with APPROVED's scope: the signature no longer holds.
    await refused(verifyReceipt(tampered(ALWAYS, { payload: (c) => ({ ...c, scope: 'once' }) }), JWKS, { action: ACTION }), 'bad_signature');
  });

  test('a denial is not approved; without an action its claims still verify', async () => {
    await refused(verifyReceipt(DENIED, JWKS, { action: ACTION }), 'not_approved', /^not approved$/);
    const claims = await verifyReceipt(DENIED, JWKS);
    assert.deepEqual([claims.status, claims.approved, claims.scope, claims.by], ['declined', false, null, 'bob']);
  });

  test('an action that is not {name, arguments} is refused as such', async () => {
    await refused(verifyReceipt(APPROVED, JWKS, { action: { name: 'deploy' } }), 'bad_action');
    await assert.rejects(verifyReceipt(APPROVED, JWKS, { action: ACTION, questions: [] }), TypeError);
  });

  test('a tampered payload or header fails the signature', async () => {
    await refused(verifyReceipt(tampered(DENIED, { payload: (c) => ({ ...c, approved: true }) }), JWKS), 'bad_signature', /^bad signature$/);
    await refused(verifyReceipt(tampered(APPROVED, { header: (h) => ({ ...h, typ: 'JOSE' }) }), JWKS), 'bad_signature');
    const [h, p] = APPROVED.split('.');
    await refused(verifyReceipt(`${h}.${p}.${b64url('x'.repeat(64))}`, JWKS), 'bad_signature');
    await refused(verifyReceipt(`${h}.${p}.AAAA`, JWKS), 'bad_signature'); // not even 64 bytes
  });

  test('alg is pinned to EdDSA: none and HS256 are refused before any key is tried', async () => {
    for (const alg of ['none', 'HS256', 'ES256']) {
      await refused(verifyReceipt(tampered(APPROVED, { header: (h) => ({ ...h, alg }) }), JWKS), 'bad_signature', new RegExp(`alg "${alg}"`));
    }
    const [h, p] = tampered(APPROVED, { header: (x) => ({ ...x, alg: 'none' }) }).split('.');
    await refused(verifyReceipt(`${h}.${p}.`, JWKS), 'malformed'); // an unsecured JWS has no signature at all
  });

  test('another key under the same kid fails the signature; an unknown kid is named', async () => {
    await refused(verifyReceipt(APPROVED, { keys: [await otherKey(KID)] }), 'bad_signature');
    await refused(verifyReceipt(APPROVED, { keys: [await otherKey('k2')] }), 'unknown_kid', new RegExp(`^unknown kid ${KID}: `));
    // The right key among others is found by its kid.
    assert.equal((await verifyReceipt(APPROVED, { keys: [await otherKey('k2'), ...JWKS.keys] })).sid, 'deploy-42');
  });

  test('a key that is not Ed25519, and a JWKS that is not one, are refused', async () => {
    await refused(verifyReceipt(APPROVED, { keys: [{ ...JWKS.keys[0], crv: 'X25519' }] }), 'bad_key');
    await refused(verifyReceipt(APPROVED, { keys: [{ ...JWKS.keys[0], alg: 'HS256' }] }), 'bad_key');
    await refused(verifyReceipt(APPROVED, { keys: [{ ...JWKS.keys[0], x: 'AAAA' }] }), 'bad_key', /malformed/);
    await refused(verifyReceipt(APPROVED, { keys: {} }), 'bad_jwks');
    await refused(verifyReceipt(APPROVED, null), 'bad_jwks');
  });

  test('what is not a compact JWS, has no kid or asks for crit extensions is malformed', async () => {
    for (const text of ['', 'abc', 'a.b', 'a.b.c.d', '!!.e30.AAAA', `${b64url('[1]')}.e30.AAAA`, 42]) {
      await refused(verifyReceipt(text, JWKS), 'malformed');
    }
    await refused(verifyReceipt(tampered(APPROVED, { header: ({ kid, ...h }) => h }), JWKS), 'malformed', /names no kid/);
    await refused(verifyReceipt(tampered(APPROVED, { header: (h) => ({ ...h, crit: ['exp'] }) }), JWKS), 'malformed', /crit/);
    // Surrounding whitespace (a receipt read from a file) is no matter.
    assert.equal((await verifyReceipt(`  ${APPROVED}\n`, JWKS)).rid, 'r-approve');
  });
});

describe('ReceiptKeys', () => {
  test('fetch <url>/.well-known/jwks.json once for callers together, and keep no failed fetch', async () => {
    let fetched = 0;
    let failing = true;
    const keys = new ReceiptKeys('https://askd.test/prefix', {
      fetch: async (url) => {
        fetched++;
        assert.equal(String(url), 'https://askd.test/prefix/.well-known/jwks.json');
        if (failing) {
          failing = false;
          throw new TypeError('fetch failed');
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
        return Response.json(JWKS);
      },
    });
    await assert.rejects(verifyReceipt(APPROVED, keys), AskdUnavailable);
    const both = await Promise.all([verifyReceipt(APPROVED, keys, { action: ACTION }), verifyReceipt(DENIED, keys)]);
    assert.deepEqual(both.map((c) => c.status), ['answered', 'declined']);
    assert.equal(fetched, 2, 'one fetch after the failed one, for both');
  });

  test('askd refusing the fetch is an AskdError; what is not a JWKS is bad_jwks', async () => {
    const notFound = new ReceiptKeys('https://askd.test', { fetch: async () => new Response('no', { status: 404 }) });
    await assert.rejects(verifyReceipt(APPROVED, notFound), (err) => err instanceof AskdError && err.status === 404);
    const html = new ReceiptKeys('https://askd.test', { fetch: async () => new Response('<html>') });
    await refused(verifyReceipt(APPROVED, html), 'bad_jwks');
    const other = new ReceiptKeys('https://askd.test', { fetch: async () => Response.json({ keys: 'none' }) });
    await refused(verifyReceipt(APPROVED, other), 'bad_jwks');
  });

  test('a signal gives up waiting for the fetch', async () => {
    const keys = new ReceiptKeys('https://askd.test', { fetch: () => new Promise(() => {}) });
    const controller = new AbortController();
    const waiting = verifyReceipt(APPROVED, keys, { signal: controller.signal });
    controller.abort(new Error('no longer needed'));
    await assert.rejects(waiting, /no longer needed/);
  });
});

describe('receiptDigest', () => {
  test('is RFC 8785: key order, number forms and escapes do not change it', async () => {
    const a = await receiptDigest({ b: [1, 1.0, 1e21, 0.1], a: 'é\n"', c: { y: null, x: true } });
    const b = await receiptDigest(JSON.parse('{"c":{"x":true,"y":null},"a":"\\u00e9\\n\\"","b":[1.0,1,1E+21,1e-1]}'));
    assert.equal(a, b);
    assert.match(a, /^sha256:[0-9a-f]{64}$/);
  });

  test('hashes a lone surrogate as U+FFFD, as askd does (the value askd computed)', async () => {
    const expected = 'sha256:9647489b2bc2aa97913dbed2d6c812138116df4a16d592a8b2da967530e79aeb';
    assert.equal(await receiptDigest(JSON.parse('{"s":"\\ud800x","\\udc00k":1}')), expected);
    assert.equal(await receiptDigest({ s: '\uFFFDx', '\uFFFDk': 1 }), expected);
  });
});

describe('receipts from askd serve', { timeout: 120_000 }, () => {
  let askd;
  let agent;
  let tab;
  before(async () => {
    askd = await Askd.create();
    await askd.start();
    agent = new Agent({ url: askd.url, token: await askd.token('agent') });
    tab = new Inbox({ url: askd.url, token: await askd.token('user', 'alice') });
    tab.start();
    await tab.ready();
  });
  after(async () => {
    tab.close();
    await askd.close();
  });

  /** An answered question: its result and the questions as askd listed them. */
  async function answered(sid) {
    const questions = [{ question: 'Ship it?', header: 'Ship', options: [{ label: 'Yes' }, { label: 'No' }] }, { question: 'Note?' }];
    const shown = next(tab, 'asked', (q) => q.sessionId === sid);
    const pending = await agent.submit(sid, { userId: 'alice', questions });
    const [listed] = await agent.pending(sid);
    await tab.answer((await shown).requestId, { 'Ship it?': 'Yes', 'Note?': 'ça va' });
    const result = await agent.wait(sid, pending.requestId);
    assert.equal(result.status, 'answered');
    return { result, questions: listed.questions };
  }

  test("askd publishes its secret's key, and an answered question's receipt verifies against it", async () => {
    const keys = new ReceiptKeys(askd.url);
    assert.deepEqual(await keys.jwks(), JWKS);
    const { result, questions } = await answered('js-receipt-1');
    const claims = await verifyReceipt(result.receipt, keys, { questions, answers: result.answers });
    assert.deepEqual([claims.sid, claims.rid, claims.status, claims.by, claims.via, claims.iss], ['js-receipt-1', result.requestId, 'answered', 'alice', 'ws', 'askd']);
    // Other answers than the ones it was given: not this receipt.
    await refused(verifyReceipt(result.receipt, keys, { questions, answers: { ...result.answers, 'Ship it?': 'No' } }), 'digest_mismatch');
    await refused(verifyReceipt(result.receipt, keys, { questions: questions.slice(1), answers: result.answers }), 'digest_mismatch');
    // A tampered status fails, and an approval's check on a question's receipt is "not approved".
    await refused(verifyReceipt(tampered(result.receipt, { payload: (c) => ({ ...c, status: 'declined' }) }), keys), 'bad_signature');
    await refused(verifyReceipt(result.receipt, keys, { action: ACTION }), 'not_approved');
  });

  test('a withdrawn question has a receipt whose answers are null', async () => {
    const pending = await agent.submit('js-receipt-2', { userId: 'alice', questions: [{ question: 'Later?' }] });
    const [listed] = await agent.pending('js-receipt-2');
    const result = await agent.withdraw('js-receipt-2', pending.requestId);
    assert.equal(result.status, 'cancelled');
    const claims = await verifyReceipt(result.receipt, new ReceiptKeys(askd.url), { questions: listed.questions });
    assert.deepEqual([claims.status, claims.by, claims.via], ['cancelled', null, null]);
  });

  test('ReceiptKeys fetch the JWKS once, and again once for a kid they lack', async () => {
    let fetched = 0;
    let served = { keys: [await otherKey('retired')] }; // a copy from before the key it needs
    const keys = new ReceiptKeys(`${askd.url}/`, {
      fetch: async (url, init) => {
        fetched++;
        assert.equal(url, `${askd.url}/.well-known/jwks.json`);
        const real = await fetch(url, init);
        const body = served ?? (await real.json());
        served = null;
        return Response.json(body);
      },
    });
    const { result } = await answered('js-receipt-3');
    assert.equal((await verifyReceipt(result.receipt, keys)).status, 'answered');
    assert.equal(fetched, 2, 'the first copy lacked the kid: fetched again');
    assert.equal((await verifyReceipt(result.receipt, keys)).status, 'answered');
    assert.equal(fetched, 2, 'kept');
    await refused(verifyReceipt(tampered(result.receipt, { header: (h) => ({ ...h, kid: 'nobody' }) }), keys), 'unknown_kid');
    assert.equal(fetched, 3, 'an unknown kid fetched once more before the refusal');
  });
});
