import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { resolve } from 'node:path';

/** Lambda's credentials come from the environment: the rest of the SDK's default chain is left out. */
const alias = { '@aws-sdk/credential-provider-node': resolve(import.meta.dirname, 'lambda-credentials.ts') };

/**
 * How every function is bundled (NodejsFunction and the bundle-size test): ESM with the SDK bundled (the versions
 * the tests ran, tree-shaken), no source maps (they slow cold starts), names kept for stacks; Powertools comes from
 * its Lambda layer ({@link POWERTOOLS_LAYER}), as AWS documents. See docs/operations.md, "Function bundles".
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
