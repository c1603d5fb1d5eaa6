// A real askd for the tests: `askd serve` in a child process on free ports,
// with its own state directory and secret, stopped and started again on
// the same ports and store.

import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The askd to test: ASKD_BIN, else the repository's .venv (make install). */
export const ASKD = process.env.ASKD_BIN ?? path.resolve(here, '../../../.venv/bin/askd');
const SECRET = 'askd-client-tests-0123456789abcdef-0123';
const START_MS = 20_000; // a cold interpreter on a busy machine

/** Ports free on 127.0.0.1 now, held together while picked so that they differ. */
async function freePorts(n) {
  const servers = [];
  for (let i = 0; i < n; i++) {
    const server = net.createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
  }
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

export class Askd {
  static async create(...args) {
    const stateDir = await mkdtemp(path.join(os.tmpdir(), 'askd-js-'));
    const [port, adminPort] = await freePorts(2);
    return new Askd(stateDir, port, adminPort, args);
  }

  constructor(stateDir, port, adminPort, args) {
    Object.assign(this, { stateDir, port, adminPort, args, proc: null, tokens: new Map() });
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKD_')));
    this.env = { ...env, ASKD_STATE_DIR: stateDir, ASKD_AUTH__SECRET: SECRET, ASKD_LOG__FORMAT: 'json' };
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Start `askd serve`; resolves once it logged `listening`. */
  async start() {
    const proc = spawn(
      ASKD,
      ['serve', '--host', '127.0.0.1', '--admin-host', '127.0.0.1', '--port', String(this.port), '--admin-port', String(this.adminPort), ...this.args],
      { env: this.env, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.proc = proc;
    const log = [];
    const exited = once(proc, 'exit');
    const listening = new Promise((resolve, reject) => {
      proc.on('error', reject);
      const timer = setTimeout(() => reject(new Error(`askd did not start:\n${log.join('\n')}`)), START_MS);
      exited.then(() => reject(new Error(`askd exited before listening:\n${log.join('\n')}`)));
      createInterface({ input: proc.stderr }).on('line', (line) => {
        log.push(line);
        try {
          if (JSON.parse(line).event === 'listening') {
            clearTimeout(timer);
            resolve();
          }
        } catch {
          // not a JSON log line
        }
      });
    });
    await listening;
  }

  /** SIGTERM, askd's clean stop; resolves with the exit code. */
  async stop() {
    const proc = this.proc;
    if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
    proc.kill('SIGTERM');
    const [code] = await once(proc, 'exit');
    return code;
  }

  async close() {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) {
      this.proc.kill('SIGKILL');
      await once(this.proc, 'exit');
    }
    await rm(this.stateDir, { recursive: true, force: true });
  }

  /** A token from `askd token issue`, signed with this daemon's secret. */
  async token(role, sub) {
    const key = `${role}:${sub ?? ''}`;
    if (!this.tokens.has(key)) this.tokens.set(key, this.issue('--role', role, ...(sub ? ['--sub', sub] : [])));
    return this.tokens.get(key);
  }

  /** A new token each call: `askd token issue` with these arguments. */
  async issue(...args) {
    const { stdout } = await promisify(execFile)(ASKD, ['token', 'issue', ...args], { env: this.env });
    return stdout.trim();
  }

  /** `askd open --user USER`'s one-time code (the link's `#code=`). */
  async openCode(user) {
    const { stdout } = await promisify(execFile)(ASKD, ['open', '--user', user, '--no-browser'], { env: this.env });
    return new URLSearchParams(new URL(stdout.trim()).hash.slice(1)).get('code');
  }

  /** An admin API call; the JSON body of its reply. */
  async admin(method, path, body) {
    const response = await fetch(`http://127.0.0.1:${this.adminPort}${path}`, {
      method,
      headers: { Authorization: `Bearer ${await this.token('admin')}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json;
  }
}

/** The next `type` event of `inbox` that `test` accepts (default: any), within `ms`. */
export function next(inbox, type, test = () => true, ms = 10_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${type} event within ${ms} ms`));
    }, ms);
    const off = inbox.on(type, (event) => {
      if (!test(event)) return;
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

/** The next connection state named `state`. */
export const nextState = (inbox, state, ms) => next(inbox, 'state', (s) => s.state === state, ms);
