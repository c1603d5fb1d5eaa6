// askd open's one-time code, redeemed by the client against a real askd.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { AskdError, AskdUnavailable, Inbox, redeemCode } from '../dist/index.js';
import { Askd } from './askd.js';

describe('redeemCode', { timeout: 60_000 }, () => {
  let askd;
  before(async () => {
    askd = await Askd.create();
    await askd.start();
  });
  after(() => askd.close());

  test('a code gives a user token an inbox connects with, once', async (t) => {
    const code = await askd.openCode('alice');
    const opened = await redeemCode(askd.url, code);
    assert.equal(opened.userId, 'alice');
    const inbox = new Inbox({ url: askd.url, token: opened.token });
    t.after(() => inbox.close());
    inbox.start();
    await inbox.ready();

    const again = await redeemCode(askd.url, code).then(
      () => assert.fail('a used code was taken again'),
      (err) => err,
    );
    assert.ok(again instanceof AskdError);
    assert.equal(again.status, 401);
    assert.equal(again.code, 'unauthorized');
    assert.match(again.message, /already used/);
  });

  test('under a path prefix, the code goes to <prefix>/v1/open', async () => {
    const seen = [];
    const fake = async (url, init) => {
      seen.push([String(url), init.method, init.body]);
      return new Response(JSON.stringify({ token: 't', userId: 'bob' }), { status: 200 });
    };
    assert.deepEqual(await redeemCode('https://tools.example.com/askd', 'C', { fetch: fake }), { token: 't', userId: 'bob' });
    assert.deepEqual(seen, [['https://tools.example.com/askd/v1/open', 'POST', '{"code":"C"}']]);
  });

  test('an askd that cannot be reached is AskdUnavailable, not retried', async () => {
    let calls = 0;
    const down = async () => {
      calls += 1;
      throw new TypeError('fetch failed');
    };
    await assert.rejects(redeemCode(askd.url, 'C', { fetch: down }), AskdUnavailable);
    assert.equal(calls, 1);
  });
});
