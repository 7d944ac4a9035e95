import { format, type CsvFormatterStream } from 'fast-csv';
import { csvDate } from './days.js';
import { eventColumns, type EventName } from './types.js';

/** Row delimiter of the event files: CRLF, as RFC 4180 writes it. */
export const ROW_DELIMITER = '\r\n';

/** The values of one stored record in the column order of its event (spec §6); absent fields are empty. */
export function csvRow(event: EventName, record: Record<string, unknown>): string[] {
  return eventColumns[event].map((column) => {
    const value = record[column];
    if (column === 'date') return csvDate(String(value));
    return value === undefined || value === null ? '' : String(value);
  });
}

/**
 * A fast-csv formatter writing the exact §6 header of the event then one
 * line per row: RFC 4180 quoting (fields with a comma, quote, CR or LF are
 * quoted, quotes doubled), CRLF line ends, a CRLF after the last line.
 * The header is written even when no row follows.
 */
export function csvFormatter(event: EventName): CsvFormatterStream<string[], string[]> {
  return format<string[], string[]>({
    headers: [...eventColumns[event]],
    writeHeaders: true,
    alwaysWriteHeaders: true,
    rowDelimiter: ROW_DELIMITER,
    includeEndRowDelimiter: true,
  });
}

/** The header line alone: the file of a day without events. */
export function csvHeaderLine(event: EventName): string {
  return eventColumns[event].join(',') + ROW_DELIMITER;
}
