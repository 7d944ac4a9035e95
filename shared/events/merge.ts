/**
 * Streaming k-way merge of date-sorted record streams, in batches (one await
 * per batch, not per line). Pure: no AWS. Memory is one batch per source
 * plus the sources' own stream buffers.
 */

/** One stored event line and its instant (ms since the epoch) for ordering. */
export interface TimedLine {
  at: number;
  line: string;
}

export type Batch = TimedLine[];

/** Lines per output batch. */
const OUT_BATCH = 2048;

const DATE_FIRST = '{"date":"';

/**
 * The instant of a raw JSON line's `date`; throws with the line when it has
 * none. Lines written by recordEvents start with the date, which is read
 * without parsing the whole line.
 */
export function timeOf(line: string): number {
  if (line.startsWith(DATE_FIRST)) {
    const at = Date.parse(line.slice(DATE_FIRST.length, line.indexOf('"', DATE_FIRST.length)));
    if (!Number.isNaN(at)) return at;
  }
  const record = JSON.parse(line) as { date?: unknown };
  const at = typeof record.date === 'string' ? Date.parse(record.date) : NaN;
  if (Number.isNaN(at)) throw new Error(`Event line without a valid date: ${line.slice(0, 200)}`);
  return at;
}

/** Splits a byte stream into batches of lines (LF or CRLF), one batch per chunk, skipping empty lines. */
export async function* splitLines(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string[]> {
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  for await (const chunk of chunks) {
    rest += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    const lines: string[] = [];
    let start = 0;
    let nl: number;
    while ((nl = rest.indexOf('\n', start)) !== -1) {
      const line = rest.charCodeAt(nl - 1) === 13 ? rest.slice(start, nl - 1) : rest.slice(start, nl);
      if (line) lines.push(line);
      start = nl + 1;
    }
    rest = rest.slice(start);
    if (lines.length > 0) yield lines;
  }
  rest += decoder.decode();
  if (rest.trim()) yield [rest.replace(/\r$/, '')];
}

/** Attaches instants to batches of lines and checks they never go back in time. */
export async function* timedLines(batches: AsyncIterable<string[]>, name: string): AsyncGenerator<Batch> {
  let last = -Infinity;
  for await (const lines of batches) {
    const batch: Batch = new Array<TimedLine>(lines.length);
    for (let i = 0; i < lines.length; i++) {
      const at = timeOf(lines[i]);
      if (at < last) throw new Error(`Source ${name} is not sorted by date`);
      last = at;
      batch[i] = { at, line: lines[i] };
    }
    yield batch;
  }
}

/** Sorts a small source in memory (stable), for sources whose order is not guaranteed. */
export function sortedLines(lines: string[]): Batch {
  return lines
    .map((line, i) => ({ at: timeOf(line), line, i }))
    .sort((a, b) => a.at - b.at || a.i - b.i)
    .map(({ at, line }) => ({ at, line }));
}

interface Head {
  buf: Batch;
  pos: number;
  source: number;
  it: AsyncIterator<Batch>;
}

/** a before b: earlier instant, then lower source index (a stable, deterministic merge). */
const before = (a: Head, b: Head) => {
  const x = a.buf[a.pos].at;
  const y = b.buf[b.pos].at;
  return x < y || (x === y && a.source < b.source);
};

/** The next non-empty batch of an iterator, or undefined at its end. */
async function nextBatch(it: AsyncIterator<Batch>): Promise<Batch | undefined> {
  for (;;) {
    const r = await it.next();
    if (r.done) return undefined;
    if (r.value.length > 0) return r.value;
  }
}

/**
 * Merges sorted sources (streams of sorted batches) into one sorted stream
 * of batches. Equal instants keep the order of the sources, so merging the
 * same sources gives the same output.
 */
export async function* mergeSorted(sources: AsyncIterable<Batch>[]): AsyncGenerator<Batch> {
  const heap: Head[] = [];
  const siftUp = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(heap[i], heap[p])) return;
      [heap[i], heap[p]] = [heap[p], heap[i]];
      i = p;
    }
  };
  const siftDown = () => {
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l], heap[m])) m = l;
      if (r < heap.length && before(heap[r], heap[m])) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m], heap[i]];
      i = m;
    }
  };
  const iterators = sources.map((s) => s[Symbol.asyncIterator]());
  try {
    const firsts = await Promise.all(iterators.map(nextBatch));
    firsts.forEach((buf, source) => {
      if (!buf) return;
      heap.push({ buf, pos: 0, source, it: iterators[source] });
      siftUp(heap.length - 1);
    });
    let out: Batch = [];
    while (heap.length > 0) {
      const top = heap[0];
      out.push(top.buf[top.pos++]);
      if (top.pos === top.buf.length) {
        const buf = await nextBatch(top.it);
        if (buf) {
          top.buf = buf;
          top.pos = 0;
          siftDown();
        } else {
          const last = heap.pop()!;
          if (heap.length > 0) {
            heap[0] = last;
            siftDown();
          }
        }
      } else if (heap.length > 1) {
        siftDown();
      }
      if (out.length >= OUT_BATCH) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  } finally {
    await Promise.allSettled(iterators.map(async (it) => it.return?.()));
  }
}
