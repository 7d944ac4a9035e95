/**
 * Media types as RFC 9110 §8.3.1 writes them: `type/subtype` compared
 * case-insensitively, optional whitespace around the `;` before parameters.
 */

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const MEDIA_TYPE = new RegExp(`^\\s*(${TOKEN})/(${TOKEN})\\s*(?:;([\\s\\S]*))?$`);

export interface MediaType {
  /** `type/subtype`, lower-cased. */
  essence: string;
  /** The header rewritten canonically: the essence, then `; name=value` per parameter (names lower-cased). */
  normalized: string;
}

/** Parses a Content-Type header; undefined when it is absent or not a media type. */
export function parseMediaType(header: string | undefined): MediaType | undefined {
  const match = header === undefined ? null : MEDIA_TYPE.exec(header);
  if (!match) return undefined;
  const essence = `${match[1]}/${match[2]}`.toLowerCase();
  const params = (match[3] ?? '')
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p !== '')
    .map((p) => {
      const eq = p.indexOf('=');
      return eq < 0 ? p.toLowerCase() : `${p.slice(0, eq).trim().toLowerCase()}=${p.slice(eq + 1).trim()}`;
    });
  return { essence, normalized: [essence, ...params].join('; ') };
}

/** True for JSON: `application/json` or a `+json` structured syntax suffix. */
export const isJsonType = (essence: string) => essence === 'application/json' || /^application\/[^/]+\+json$/.test(essence);

/** True for an HTML form body. */
export const isFormType = (essence: string) => essence === 'application/x-www-form-urlencoded';
