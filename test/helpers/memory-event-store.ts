/** An in-memory EventStore for unit tests: counts open reads (the merge's bound) and records writes and reads. */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EventStore, StoredObject } from '../../shared/events/store.js';
import { asyncIterable } from './async-iterable.js';

export function memoryStore() {
  const objects = new Map<string, { body: Buffer; metadata: Record<string, string>; modified: number }>();
  const stats = { open: 0, maxOpen: 0, writes: [] as string[], reads: [] as string[], concats: [] as string[][] };
  const body = (key: string) => {
    const o = objects.get(key);
    if (!o) return Promise.reject(new Error(`no object ${key}`));
    return Promise.resolve(o.body);
  };
  const store: EventStore = {
    list(prefix) {
      return Promise.resolve([...objects.entries()]
        .filter(([k]) => k.startsWith(prefix))
        .map(([key, o]): StoredObject => ({ key, size: o.body.length, etag: createHash('md5').update(o.body).digest('hex'), modified: o.modified }))
        .sort((a, b) => (a.key < b.key ? -1 : 1)));
    },
    listChildren(prefix) {
      return Promise.resolve([...new Set([...objects.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length).split('/')[0]))].sort());
    },
    async read(key, range) {
      const whole = await body(key);
      const bytes = range ? whole.subarray(range.start, range.end) : whole;
      stats.reads.push(key);
      return asyncIterable((function* () {
        stats.open++;
        stats.maxOpen = Math.max(stats.maxOpen, stats.open);
        try {
          for (let i = 0; i < bytes.length; i += 7) yield bytes.subarray(i, i + 7);
        } finally {
          stats.open--;
        }
      })());
    },
    head(key) {
      const o = objects.get(key);
      return Promise.resolve(o && { size: o.body.length, metadata: o.metadata });
    },
    async write(key, body: Readable, { metadata = {} }) {
      const chunks: Buffer[] = [];
      for await (const c of body as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
      objects.set(key, { body: Buffer.concat(chunks), metadata, modified: Date.now() });
      stats.writes.push(key);
    },
    async concat(key, pieces, { metadata = {} }) {
      const parts = await Promise.all(pieces.map(async (p) => ('text' in p ? Buffer.from(p.text) : body(p.key))));
      objects.set(key, { body: Buffer.concat(parts), metadata, modified: Date.now() });
      stats.writes.push(key);
      stats.concats.push(pieces.map((p) => ('text' in p ? 'text' : p.key)));
    },
    remove(keys) {
      for (const k of keys) objects.delete(k);
      return Promise.resolve();
    },
    presign(key) {
      return Promise.resolve(`memory://${key}`);
    },
  };
  const put = (key: string, lines: object[]) => objects.set(key, { body: Buffer.from(lines.map((l) => JSON.stringify(l)).join('\n') + '\n'), metadata: {}, modified: Date.now() });
  const text = (key: string) => objects.get(key)?.body.toString('utf8');
  return { store, put, text, objects, stats };
}
