import { parseString } from 'fast-csv';

/** Parses CSV text back into rows (header included), with fast-csv. */
export function parseCsv(text: string): Promise<string[][]> {
  return new Promise((done, fail) => {
    const rows: string[][] = [];
    parseString(text)
      .on('data', (r: string[]) => rows.push(r))
      .on('error', fail)
      .on('end', () => done(rows));
  });
}
