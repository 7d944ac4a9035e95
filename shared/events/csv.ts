import { format, type CsvFormatterStream } from 'fast-csv';
import { csvDate } from './days.js';
import { eventColumns, type EventName } from './types.js';

/** Row delimiter of the event files: CRLF, as RFC 4180 writes it. */
export const ROW_DELIMITER = '\r\n';

/**
 * How cell values are written: `safe` (the default) keeps a spreadsheet from
 * evaluating any cell as a formula; `raw` writes the values as recorded.
 */
export type CsvVariant = 'safe' | 'raw';

/** First characters that make Excel, LibreOffice Calc or Google Sheets read a cell as a formula (OWASP CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A cell a spreadsheet shows as text: a value beginning with `=`, `+`, `-`,
 * `@`, tab or carriage return gets a leading apostrophe (`'=1+2`), which
 * spreadsheets hide and which stops evaluation. Every other value is kept.
 */
export function formulaSafe(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/** The values of one stored record in the column order of its event (spec §6); absent fields are empty. */
export function csvRow(event: EventName, record: Record<string, unknown>, variant: CsvVariant = 'safe'): string[] {
  return eventColumns[event].map((column) => {
    const value = record[column];
    if (column === 'date') return csvDate(String(value));
    // eslint-disable-next-line @typescript-eslint/no-base-to-string -- stored event fields are scalars (record.ts writes them)
    const text = value === undefined || value === null ? '' : String(value);
    return variant === 'safe' ? formulaSafe(text) : text;
  });
}

/**
 * A fast-csv formatter writing the exact §6 header of the event then one
 * line per row: RFC 4180 quoting (fields with a comma, quote, CR or LF are
 * quoted, quotes doubled), CRLF line ends, a CRLF after the last line.
 * The header is written even when no row follows; `header: false` writes
 * the rows alone (an hour of a day's file), each exactly as after a header.
 */
export function csvFormatter(event: EventName, { header = true }: { header?: boolean } = {}): CsvFormatterStream<string[], string[]> {
  return format<string[], string[]>({
    headers: [...eventColumns[event]],
    writeHeaders: header,
    alwaysWriteHeaders: header,
    rowDelimiter: ROW_DELIMITER,
    includeEndRowDelimiter: true,
  });
}

/** The header line alone: the file of a day without events. */
export function csvHeaderLine(event: EventName): string {
  return eventColumns[event].join(',') + ROW_DELIMITER;
}
