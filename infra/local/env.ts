import { localAwsEnv } from './services.js';

/** Names of the local table and buckets (the CDK stack names its own). */
export const localNames = { TABLE_NAME: 'newsletter-service', IMPORTS_BUCKET: 'imports', EVENTS_BUCKET: 'events' };

/**
 * The environment the handlers get locally: the same configuration names as
 * in AWS, with the SDK endpoints pointing at the emulators.
 */
export function localServiceEnv(o: { dynamoEndpoint: string; s3Endpoint: string; publicBaseUrl: string; dataDir: string }): Record<string, string> {
  return {
    ...localAwsEnv,
    ...localNames,
    AWS_ENDPOINT_URL_DYNAMODB: o.dynamoEndpoint,
    AWS_ENDPOINT_URL_S3: o.s3Endpoint,
    PUBLIC_BASE_URL: o.publicBaseUrl,
    DATA_DIR: o.dataDir,
    MAIL_TRANSPORT: 'outbox',
    MAIL_FROM: 'newsletter@localhost',
    // The demo client's catalogue feed is the demo site on this machine (feeds are set by support, never by an API caller).
    FEED_ALLOW_LOOPBACK: 'true',
    // Webhooks to receivers on this machine, over plain http (in AWS: https to public addresses only).
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    // Powertools: the same log lines as in AWS, indented for a terminal; metrics off unless POWERTOOLS_METRICS_DISABLED=false.
    POWERTOOLS_DEV: 'true',
  };
}

/** The settings that let a process fetch loopback addresses (feeds, imports): never on unless the running stack has them on. */
export const LOOPBACK_ALLOWANCES = ['FEED_ALLOW_LOOPBACK', 'IMPORT_ALLOW_LOOPBACK', 'WEBHOOK_ALLOW_LOOPBACK'] as const;

/**
 * What `npm start` writes to DATA_DIR/local-env.json for the other local
 * processes (`npm run job`, the admin CLI): each of `names` as this process
 * runs with it (the user's value where they set one, else the default
 * localServiceEnv gave), and the loopback allowances always, `true` or
 * `false` as shared/config.ts reads them, so another process allows exactly
 * what the running stack allows.
 */
export function envForOtherProcesses(names: Iterable<string>, running: Record<string, string | undefined> = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = running[name];
    if (value !== undefined) env[name] = value;
  }
  for (const name of LOOPBACK_ALLOWANCES) env[name] = String((running[name] ?? '').toLowerCase() === 'true');
  return env;
}

/** Applies variables to this process without overriding ones the user set. */
export function applyEnv(env: Record<string, string>, { override = false } = {}): void {
  for (const [name, value] of Object.entries(env)) {
    if (override || process.env[name] === undefined) process.env[name] = value;
  }
}
