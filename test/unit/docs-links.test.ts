/**
 * The docs stay navigable: every relative link and #anchor in README.md and
 * docs/*.md points at a file and heading that exist, and every route of the
 * route table is documented in docs/api.md.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { routeList } from '../../shared/routes.js';

const root = resolve(import.meta.dirname, '../..');
const files = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Markdown text outside fenced code blocks. */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

function links(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1]).filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('docs links', () => {
  it('finds the docs: a README of at most ~250 lines and the docs it maps', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(260);
    for (const doc of ['api.md', 'operations.md', 'architecture.md', 'benchmarks.md', 'security.md']) expect(readme).toContain(`(docs/${doc})`);
  });

  it.each(files)('every relative link and anchor of %s points somewhere', (file) => {
    const text = readFileSync(join(root, file), 'utf8');
    const broken: string[] = [];
    for (const target of links(text)) {
      const [path, anchor] = target.split('#');
      const targetFile = path ? resolve(dirname(join(root, file)), decodeURIComponent(path)) : join(root, file);
      if (!existsSync(targetFile)) {
        broken.push(`${target}: no file ${path}`);
        continue;
      }
      if (anchor !== undefined && targetFile.endsWith('.md') && !anchorsOf(readFileSync(targetFile, 'utf8')).has(anchor)) broken.push(`${target}: no heading #${anchor}`);
    }
    expect(broken).toEqual([]);
  });

  it('documents every route of the route table in docs/api.md', () => {
    const api = readFileSync(join(root, 'docs/api.md'), 'utf8');
    const lines = api.split('\n');
    const missing = routeList.filter((r) => !lines.some((line) => new RegExp(`\\b${r.method}\\b`).test(line) && line.includes(`\`${r.path}\``))).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });

  it('the anchor rules match GitHub on the headings these docs use', () => {
    expect([...anchorsOf('## `GET /v1/token` (4.4)\n## Subscribers of a list (4.6–4.8)\n## A\n## A')]).toEqual(['get-v1token-44', 'subscribers-of-a-list-4648', 'a', 'a-1']);
  });
});
