import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { esbuildOptions } from '../../infra/constructs/bundling.js';
import { projectRoot } from '../../infra/constructs/service-function.js';
import { jobList } from '../../shared/jobs.js';
import { fallbackHandler, routeList } from '../../shared/routes.js';

/** Cold start grows with the bundle: median ≤ 300 KB, largest ≤ 500 KB, Powertools not counted: it comes from the layer (docs/operations.md, "Deploy"). */
const MEDIAN_LIMIT = 300_000;
const LARGEST_LIMIT = 500_000;

interface Bundle {
  id: string;
  bytes: number;
  inputs: string[];
  code: Uint8Array;
}

const entries = [
  ...routeList.map((r) => ({ id: r.id, entry: r.handler, table: !!r.access.table })),
  { id: 'fallback', entry: fallbackHandler, table: false },
  ...jobList.map((j) => ({ id: j.id, entry: j.handler, table: !!j.access.table })),
];

async function bundle(id: string, entry: string): Promise<Bundle> {
  const result = await build(esbuildOptions(resolve(projectRoot, entry)));
  const out = result.outputFiles!.find((f) => f.path.endsWith('index.mjs'))!;
  return { id, bytes: out.contents.byteLength, inputs: Object.keys(result.metafile!.inputs), code: out.contents };
}

describe('function bundles (bundled as the CDK construct does)', () => {
  it('every function is small: median and largest minified index.mjs within bounds; no source map in the zip', async () => {
    const bundles = await Promise.all(entries.map((e) => bundle(e.id, e.entry)));
    const sizes = bundles.map((b) => b.bytes).sort((a, b) => a - b);
    const median = sizes[Math.floor(sizes.length / 2)];
    const largest = sizes[sizes.length - 1];
    const kb = (n: number) => `${(n / 1000).toFixed(0)} KB`;
    console.log(
      [...bundles]
        .sort((a, b) => b.bytes - a.bytes)
        .map((b) => `${b.id.padEnd(26)} ${kb(b.bytes).padStart(7)}`)
        .concat(`median ${kb(median)} (limit ${kb(MEDIAN_LIMIT)}), largest ${kb(largest)} (limit ${kb(LARGEST_LIMIT)}), ${bundles.length} functions`)
        .join('\n'),
    );
    expect(esbuildOptions('x').sourcemap).toBe(false);
    expect(median).toBeLessThanOrEqual(MEDIAN_LIMIT);
    expect(largest).toBeLessThanOrEqual(LARGEST_LIMIT);

    // Each bundle loads as Lambda loads it (ESM, the require banner, the credentials alias, Powertools from the layer:
    // here the installed packages stand in for it) and exports its handler.
    const dir = mkdtempSync(join(tmpdir(), 'bundles-'));
    try {
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(resolve(projectRoot, 'node_modules/@aws-lambda-powertools'), join(dir, 'node_modules/@aws-lambda-powertools'));
      for (const b of bundles) writeFileSync(join(dir, `${b.id}.mjs`), b.code);
      const script = `for (const id of ${JSON.stringify(bundles.map((b) => b.id))}) { const m = await import('${dir}/' + id + '.mjs'); if (typeof m.handler !== 'function') throw new Error(id + ': no handler'); } console.log('loaded');`;
      const env = { ...process.env, TABLE_NAME: 't', IMPORTS_BUCKET: 'i', EVENTS_BUCKET: 'e', MAIL_FROM: 'a@example.com', PUBLIC_BASE_URL: 'https://x.example', AWS_REGION: 'eu-west-1' };
      expect(execFileSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' }).trim()).toBe('loaded');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('functions without table access bundle no DynamoDB client', async () => {
    const without = entries.filter((e) => !e.table);
    expect(without.map((e) => e.id)).toEqual(expect.arrayContaining(['fallback', 'openapiGet', 'libraryGet']));
    for (const e of without) {
      const { inputs } = await bundle(e.id, e.entry);
      expect(inputs.filter((i) => /client-dynamodb|lib-dynamodb|shared\/db\/client/.test(i)), e.id).toEqual([]);
    }
  });
});
