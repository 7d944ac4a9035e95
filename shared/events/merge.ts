/**
 * Streaming k-way merge of date-sorted record streams. Pure: no AWS. Memory
 * is one pending item per source plus the sources' own buffers.
 */

/** One stored event line and its instant (ms since the epoch) for ordering. */
export interface TimedLine {
  at: number;
  line: string;
}

/** Parses a raw JSON line's `date`; throws with the line when it has none. */
export function timeOf(line: string): number {
  const record = JSON.parse(line) as { date?: unknown };
  const at = typeof record.date === 'string' ? Date.parse(record.date) : NaN;
  if (Number.isNaN(at)) throw new Error(`Event line without a valid date: ${line.slice(0, 200)}`);
  return at;
}

/** Splits a byte stream into lines (LF or CRLF), skipping empty ones. */
export async function* splitLines(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8');
  let rest = '';
  for await (const chunk of chunks) {
    rest += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    let nl: number;
    while ((nl = rest.indexOf('\n', start)) !== -1) {
      const line = rest.charCodeAt(nl - 1) === 13 ? rest.slice(start, nl - 1) : rest.slice(start, nl);
      if (line) yield line;
      start = nl + 1;
    }
    rest = rest.slice(start);
  }
  rest += decoder.decode();
  if (rest.trim()) yield rest.replace(/\r$/, '');
}

/** Attaches instants to the lines of a source and checks they never go back in time. */
export async function* timedLines(lines: AsyncIterable<string>, name: string): AsyncGenerator<TimedLine> {
  let last = -Infinity;
  for await (const line of lines) {
    const at = timeOf(line);
    if (at < last) throw new Error(`Source ${name} is not sorted by date`);
    last = at;
    yield { at, line };
  }
}

/** Sorts a small source in memory (stable), for sources whose order is not guaranteed. */
export function sortedLines(lines: string[]): TimedLine[] {
  return lines
    .map((line, i) => ({ at: timeOf(line), line, i }))
    .sort((a, b) => a.at - b.at || a.i - b.i)
    .map(({ at, line }) => ({ at, line }));
}

interface Head {
  item: TimedLine;
  source: number;
  it: AsyncIterator<TimedLine>;
}

/** a before b: earlier instant, then lower source index (a stable, deterministic merge). */
const before = (a: Head, b: Head) => a.item.at < b.item.at || (a.item.at === b.item.at && a.source < b.source);

/**
 * Merges sorted sources into one sorted stream. Equal instants keep the
 * order of the sources, so merging the same sources gives the same output.
 */
export async function* mergeSorted(sources: AsyncIterable<TimedLine>[]): AsyncGenerator<TimedLine> {
  const heap: Head[] = [];
  const push = (h: Head) => {
    heap.push(h);
    let i = heap.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(heap[i], heap[p])) break;
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
    const firsts = await Promise.all(iterators.map((it) => it.next()));
    firsts.forEach((first, source) => {
      if (!first.done) push({ item: first.value, source, it: iterators[source] });
    });
    while (heap.length > 0) {
      const top = heap[0];
      yield top.item;
      const next = await top.it.next();
      if (next.done) {
        const last = heap.pop()!;
        if (heap.length > 0) {
          heap[0] = last;
          siftDown();
        }
      } else {
        top.item = next.value;
        siftDown();
      }
    }
  } finally {
    await Promise.allSettled(iterators.map((it) => it.return?.()));
  }
}
