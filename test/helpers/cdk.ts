import { App } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** cdk.json's context (the feature flags), as `cdk synth` applies it. */
export const cdkContext = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

/** An App with cdk.json's flags that skips esbuild bundling (`npx cdk synth` bundles for real). */
export function testApp(): App {
  return new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
}
