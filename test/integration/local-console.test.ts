import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { consoleEnv, jobLine, requestLine } from '../../infra/local/console.js';

const REQUEST = /^(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \/\S* \d{3} \d+ ms$/;
const JOB = /^job \w+ \d+ ms (failed: .+|.+)$/;

function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'console-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe("npm start's console", () => {
  it('formats a request and a job run on one line each; LOG_FORMAT=json turns the Powertools lines back on, one object per line', () => {
    expect(requestLine('GET', '/v1/files/7', 404, 12.4)).toBe('GET /v1/files/7 404 12 ms');
    expect(jobLine('optinReminders', 35.2, { result: { sent: 0 } })).toBe('job optinReminders 35 ms {"sent":0}');
    expect(jobLine('x', 1, { error: new Error('no table\nat …') })).toBe('job x 1 ms failed: no table');
    expect(jobLine('x', 1, { result: { ids: 'y'.repeat(500) } })).toHaveLength('job x 1 ms '.length + 160);
    expect(consoleEnv({})).toEqual({ POWERTOOLS_LOG_LEVEL: 'SILENT' });
    expect(consoleEnv({ LOG_FORMAT: 'json' })).toEqual({ POWERTOOLS_DEV: 'false' });
  });

  it('prints one line per request and one per job run, nothing else, while jobs and requests run together', async () => {
    const [port, dynamo, s3] = await Promise.all([freePort(), freePort(), freePort()]);
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DYNAMODB_PORT: String(dynamo), S3_PORT: String(s3), DATA_DIR: dataDir, NODE_OPTIONS: '--openssl-legacy-provider' };
    for (const name of ['POWERTOOLS_DEV', 'POWERTOOLS_LOG_LEVEL', 'LOG_LEVEL', 'LOG_FORMAT', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_S3']) delete env[name];
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/local/start.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const until = async (done: () => boolean, what: string) => {
      const deadline = Date.now() + 90_000;
      while (!done()) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${what} never came:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      await until(() => out.includes('Service running'), 'the banner');
      const base = `http://127.0.0.1:${port}`;
      const answers = await Promise.all([fetch(`${base}/v1/openapi.json`), fetch(`${base}/v1/nothing-here`), fetch(`${base}/v1/token?username=nobody&password=wrong`)]);
      await Promise.all(answers.map((a) => a.arrayBuffer()));
      // The scheduled jobs' catch-up runs start 2 s after the gateway listens.
      await until(() => (out.match(/^job /gm) ?? []).length >= 3 && (out.match(/^GET /gm) ?? []).length >= 3, 'the job and request lines');
      const lines = out.slice(out.lastIndexOf('/v1/openapi.json\n') + '/v1/openapi.json\n'.length).split('\n').filter((l) => l !== '');
      for (const line of lines) expect(line).toMatch(new RegExp(`${REQUEST.source}|${JOB.source}`));
      expect(lines.filter((l) => /^GET \/v1\/nothing-here 404 \d+ ms$/.test(l))).toHaveLength(1);
      expect(lines.filter((l) => l.startsWith('GET /v1/token ')).map((l) => l.split(' ')[2])).toEqual(['401']);
      expect(out).not.toMatch(/"level"|WARN|already been added/);
    } finally {
      child.kill('SIGINT');
      await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
    }
  }, 150_000);
});
