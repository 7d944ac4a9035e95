import { execFileSync } from 'node:child_process';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { POWERTOOLS_LAYER } from '../../infra/constructs/bundling.js';
import { captureClient, observe, traced, tracingEnabled } from '../../shared/observability/index.js';
import { jobList } from '../../shared/jobs.js';
import { routeList } from '../../shared/routes.js';
import { functionView, render, synthesizedTemplate, type TemplateJson } from '../helpers/deployed-access.js';

let template: TemplateJson;
beforeAll(() => {
  template = synthesizedTemplate({ folded: true });
});

describe('traces', () => {
  it('every function traces actively (X-Ray) and gets the Powertools layer', () => {
    for (const id of [...routeList.map((r) => r.id), 'fallback', ...jobList.map((j) => j.id)]) {
      const fn = template.Resources[functionView(template, id)!.logicalId].Properties!;
      expect(fn.TracingConfig, id).toEqual({ Mode: 'Active' });
      const layers = (fn.Layers as unknown[]).map(render);
      expect(layers, id).toEqual([`arn:<AWS::Partition>:lambda:<AWS::Region>:${POWERTOOLS_LAYER.account}:layer:${POWERTOOLS_LAYER.name}:${POWERTOOLS_LAYER.version}`]);
    }
  });

  it('outside Lambda the Tracer is not loaded: three middlewares, clients as they are, traced() only runs the call', async () => {
    expect(observe('route', 'x')).toHaveLength(3);
    expect(tracingEnabled()).toBe(false);
    const client = new DynamoDBClient({ region: 'eu-west-1' });
    expect(captureClient(client)).toBe(client);
    expect(traced('### x', () => 7)).toBe(7);
    await expect(traced('### x', () => Promise.resolve(8))).resolves.toBe(8);
    await expect(traced('### x', () => Promise.reject(new Error('kept')))).rejects.toThrow('kept');
    // Loading it would install the X-Ray SDK's process-wide async hook (bench/tracer.ts: 1.55× per SDK call).
    const loaded = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { env: envWithout('AWS_EXECUTION_ENV'), encoding: 'utf8' });
    expect(JSON.parse(loaded.trim().split('\n').pop()!)).toEqual({ tracing: false, middlewares: 3, xray: [], sdkLoaded: false });
  });

  it('in Lambda the one middy stack and the job wrapper start with the Tracer, and every captured client gets its subsegment middleware', () => {
    const env = { ...envWithout('AWS_EXECUTION_ENV'), AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x' };
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { env, encoding: 'utf8' });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ tracing: true, middlewares: 4, xray: ['XRaySDKInstrumentation - build'], sdkLoaded: true });
  });
});

/** Run in a fresh process (the Tracer is chosen when shared/observability loads). */
const probe = `
const o = await import('./shared/observability/index.js');
const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
const { createRequire } = await import('node:module');
const client = o.captureClient(new DynamoDBClient({ region: 'eu-west-1' }));
const sdkLoaded = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('aws-xray-sdk-core'));
console.log(JSON.stringify({ tracing: o.tracingEnabled(), middlewares: o.observe('route', 'x').length, xray: client.middlewareStack.identify().filter((m) => /xray/i.test(m)), sdkLoaded }));
`;

function envWithout(name: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  delete env[name];
  return env;
}
