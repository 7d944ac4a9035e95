import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { BuildOptions } from 'esbuild';
import { resolve } from 'node:path';

/** Lambda's credentials come from the environment: the rest of the SDK's default chain is left out. */
const alias = { '@aws-sdk/credential-provider-node': resolve(import.meta.dirname, 'lambda-credentials.ts') };

/**
 * How every function is bundled (NodejsFunction and the bundle-size test): ESM with the SDK bundled (the versions the
 * tests ran, tree-shaken; the banner gives CJS dependencies a `require`), no source maps (they slow cold starts);
 * Powertools comes from its Lambda layer ({@link POWERTOOLS_LAYER}). See docs/operations.md, "Function bundles".
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
 * The public Powertools for AWS Lambda (TypeScript) layer every function gets. Bump its version with the packages
 * in package-lock.json: the tests run those, and the layer's release should match.
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
