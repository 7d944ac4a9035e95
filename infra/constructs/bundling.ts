import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { resolve } from 'node:path';

/** Lambda's credentials come from the environment: the rest of the SDK's default chain is left out. */
const alias = { '@aws-sdk/credential-provider-node': resolve(import.meta.dirname, 'lambda-credentials.ts') };

/**
 * How every function is bundled, once: the CDK construct passes it to
 * NodejsFunction and the bundle-size test hands the same settings to esbuild.
 * No source maps: a map doubles the zip and `--enable-source-maps` slows
 * every cold start; names are kept so a logged stack still says which
 * function threw (see docs/operations.md, "Function bundles").
 * The SDK is bundled: functions run the versions the tests ran, not the runtime's.
 * ESM with the packages' `module` entry points lets esbuild drop the SDK code a
 * function does not call (smaller bundles than CJS); the banner gives
 * the CJS dependencies that `require` Node built-ins a `require`.
 * Powertools (`@aws-lambda-powertools/*`: logger, metrics, tracer with the
 * X-Ray SDK, idempotency with JMESPath) is not bundled: every function gets
 * the Powertools Lambda layer ({@link POWERTOOLS_LAYER}), the way AWS
 * documents it for esbuild; its packages load from `/opt/nodejs/node_modules`
 * (CommonJS and ESM alike).
 */
export const bundling = {
  minify: true,
  sourceMap: false,
  keepNames: false,
  target: 'node22',
  format: OutputFormat.ESM,
  mainFields: ['module', 'main'],
  banner: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  bundleAwsSDK: true,
  externalModules: ['@aws-lambda-powertools/*'],
  esbuildArgs: Object.fromEntries(Object.entries(alias).map(([from, to]) => [`--alias:${from}`, to])),
} as const satisfies BundlingOptions;

/**
 * The public Powertools for AWS Lambda (TypeScript) layer every function
 * gets: account 094274105915, `AWSLambdaPowertoolsTypeScriptV2`, version 44
 * (the newest the Powertools docs' "Lambda layers" page listed when this was
 * written; not checked here, without AWS access, against package.json's 2.36 /
 * Idempotency 2.35). Bump it with the packages: the tests run the packages
 * of package-lock.json, and the layer's release should be the same.
 */
export const POWERTOOLS_LAYER = { account: '094274105915', name: 'AWSLambdaPowertoolsTypeScriptV2', version: 44 } as const;

/** The esbuild options NodejsFunction derives from {@link bundling}, for one entry (bundle in memory). */
export function esbuildOptions(entry: string): BuildOptions {
  return {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: bundling.target,
    format: 'esm',
    mainFields: [...bundling.mainFields],
    banner: { js: bundling.banner },
    minify: bundling.minify,
    sourcemap: bundling.sourceMap,
    keepNames: bundling.keepNames,
    alias,
    external: [...bundling.externalModules],
    write: false,
    outfile: 'index.mjs',
    metafile: true,
    logLevel: 'silent',
  };
}
