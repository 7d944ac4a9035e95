/** A Powertools log line or EMF metrics blob: the keys tests look at by name, the rest unknown. */
export interface LogLine {
  level?: string;
  message?: string;
  /** Powertools' error key: `stack` is one string in AWS, an array of lines in dev mode. */
  error?: { name?: string; message?: string; stack?: string | string[] };
  /** EMF: the metrics' definitions (the values are top-level keys). */
  _aws?: { Timestamp: number; CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit?: string }> }> };
  [key: string]: unknown;
}

/**
 * Captures what this process writes to stdout and stderr (Powertools Logger
 * and Metrics lines, in dev mode or not) and parses the JSON ones.
 */
export function captureOutput() {
  const chunks: string[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back as they were, never called unbound
  const originals = { out: process.stdout.write, err: process.stderr.write };
  const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- kept only to be put back as they were, never called unbound
  const consoleOriginals = methods.map((m) => console[m]);
  const capture = (chunk: unknown) => {
    chunks.push(String(chunk));
    return true;
  };
  process.stdout.write = capture;
  process.stderr.write = capture;
  // In dev mode (POWERTOOLS_DEV) Powertools writes through the global console, which the test runner replaces.
  for (const m of methods) console[m] = (...args: unknown[]) => void chunks.push(args.map(String).join(' '));
  return {
    text: () => chunks.join(''),
    /** Every chunk that is one JSON object (a log line or an EMF metrics blob). */
    json: () =>
      chunks.flatMap((c): LogLine[] => {
        try {
          const parsed: unknown = JSON.parse(c);
          return parsed && typeof parsed === 'object' ? [parsed as LogLine] : [];
        } catch {
          return [];
        }
      }),
    restore: () => {
      process.stdout.write = originals.out;
      process.stderr.write = originals.err;
      methods.forEach((m, i) => (console[m] = consoleOriginals[i]));
    },
  };
}
