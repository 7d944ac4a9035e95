import { describe, expect, it } from 'vitest';
import { envForOtherProcesses, localServiceEnv } from '../../infra/local/env.js';

/** The environment `npm start` runs with: its defaults under what the user set (applyEnv never overrides the user). */
const serviceEnv = localServiceEnv({ dynamoEndpoint: 'http://127.0.0.1:8000', s3Endpoint: 'http://127.0.0.1:4569', publicBaseUrl: 'http://localhost:3000', dataDir: '/tmp/data' });
const runningWith = (userSet: Record<string, string>) => ({ ...serviceEnv, ...userSet });
/** What `npm start` writes to local-env.json for `npm run job` and the admin CLI. */
const written = (userSet: Record<string, string>) => envForOtherProcesses(Object.keys(serviceEnv), runningWith(userSet));

describe('local-env.json: the settings npm start writes for the other local processes', () => {
  it('carries the loopback allowances npm start ran with, also when they are off (before: always FEED_ALLOW_LOOPBACK=true)', () => {
    expect(written({ FEED_ALLOW_LOOPBACK: 'false' })).toMatchObject({ FEED_ALLOW_LOOPBACK: 'false', IMPORT_ALLOW_LOOPBACK: 'false' });
    expect(written({ FEED_ALLOW_LOOPBACK: '0' })).toMatchObject({ FEED_ALLOW_LOOPBACK: 'false' });
    expect(written({})).toMatchObject({ FEED_ALLOW_LOOPBACK: 'true', IMPORT_ALLOW_LOOPBACK: 'false' });
    expect(written({ IMPORT_ALLOW_LOOPBACK: 'TRUE' })).toMatchObject({ FEED_ALLOW_LOOPBACK: 'true', IMPORT_ALLOW_LOOPBACK: 'true' });
  });

  it('carries every other variable as npm start runs with it, the user\'s value first', () => {
    expect(written({ MAIL_FROM: 'desk@news.example' })).toMatchObject({ MAIL_FROM: 'desk@news.example', TABLE_NAME: serviceEnv.TABLE_NAME });
    expect(Object.keys(written({})).sort()).toEqual([...new Set([...Object.keys(serviceEnv), 'IMPORT_ALLOW_LOOPBACK'])].sort());
  });
});
