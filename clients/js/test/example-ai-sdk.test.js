// examples/ai-sdk/deploy.mjs runs as an app would: in its own folder, with
// askd-client, ai and zod under their names, against a real askd; alice
// approves, then denies, and the scripted model reports each.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { Askd } from './askd.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const pkg = path.resolve(here, '..');
const example = path.resolve(pkg, '../../examples/ai-sdk/deploy.mjs');

let askd;
let app;

/** The example's folder: its script, and node_modules linking the packages it names. */
async function appFolder() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'askd-ai-sdk-example-'));
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(pkg, path.join(dir, 'node_modules', 'askd-client'), 'dir');
  for (const name of ['ai', 'zod']) await symlink(path.join(pkg, 'node_modules', name), path.join(dir, 'node_modules', name), 'dir');
  await copyFile(example, path.join(dir, 'deploy.mjs'));
  return dir;
}

/** Run the example in session `sid`; `decide(requestId)` once askd holds its approval; its stdout. */
async function runExample(sid, decide) {
  const env = { ...process.env, ASKD_URL: askd.url, ASKD_AGENT_TOKEN: await askd.token('agent'), ASKD_SESSION: sid, ASKD_USER: 'alice' };
  const child = spawn(process.execPath, ['deploy.mjs'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (err += b));
  const exited = once(child, 'exit');
  for (let i = 0; ; i++) {
    const { pending } = await askd.admin('GET', `/admin/v1/pending?sessionId=${sid}`);
    if (pending.length) {
      await decide(pending[0]);
      break;
    }
    if (child.exitCode !== null || i > 800) assert.fail(`the example asked nothing:\n${out}\n${err}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  const [code] = await exited;
  assert.equal(code, 0, err);
  return out;
}

async function decideAs(who, sid, requestId, verb, body = {}) {
  const response = await fetch(`http://127.0.0.1:${askd.adminPort}/admin/v1/sessions/${sid}/questions/${requestId}/${verb}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${await askd.token('admin', who)}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, await response.text());
}

describe('examples/ai-sdk', { timeout: 120_000 }, () => {
  before(async () => {
    askd = await Askd.create();
    await askd.start();
    app = await appFolder();
  });
  after(async () => {
    await askd.close();
    if (app) await rm(app, { recursive: true, force: true });
  });

  test('approved: the tool runs and the model reports it', async () => {
    const sid = `js-example-${process.pid}-1`;
    const out = await runExample(sid, (item) => {
      assert.match(item.action.summary, /release-bot/);
      return decideAs('alice', sid, item.requestId, 'approve');
    });
    assert.match(out, /approved \(alice approved it\)/);
    assert.match(out, /Done: deployed web to production\./);
  });

  test('denied: the model reports who denied it and why', async () => {
    const sid = `js-example-${process.pid}-2`;
    const out = await runExample(sid, (item) => decideAs('alice', sid, item.requestId, 'decline', { reason: 'not on a Friday' }));
    assert.match(out, /I did not deploy: alice denied it: not on a Friday\./);
  });
});
