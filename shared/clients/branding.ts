/**
 * What reader pages and opt-in emails show of the publisher (a client): a
 * display name and, optionally, a logo, a brand colour, a postal address and
 * a privacy-policy URL. The logo is only ever linked (the reader's browser or
 * mail client loads it), never fetched by the service.
 */
import * as v from 'valibot';

/** The stored settings (client item attribute `branding`). */
export interface Branding {
  displayName?: string;
  logoUrl?: string;
  brandColour?: string;
  postalAddress?: string;
  privacyUrl?: string;
}

/** What a page shows: always a name (the client id when none is set). */
export interface Publisher extends Branding {
  name: string;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/;

const text = (max: number, lines: boolean) =>
  v.pipe(
    v.string('must be text'),
    v.trim(),
    v.minLength(1, 'must not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
    v.check((s) => !CONTROL.test(s) && (lines || !s.includes('\n')), lines ? 'must not contain control characters (line breaks are fine)' : 'must be one line without control characters'),
  );

/** An absolute https URL without user or password, as the browser will load or open it. */
const httpsUrl = v.pipe(
  v.string('must be an https URL'),
  v.trim(),
  v.maxLength(2048, 'must be at most 2048 characters'),
  v.check((s) => {
    try {
      const url = new URL(s);
      return url.protocol === 'https:' && url.hostname !== '' && !url.username && !url.password;
    } catch {
      return false;
    }
  }, 'must be an absolute https URL without user or password'),
  v.transform((s) => new URL(s).href),
);

/** The admin CLI's input; each field names the setting it sets. */
export const BrandingSchema = v.strictObject(
  {
    displayName: v.optional(text(100, false)),
    logoUrl: v.optional(httpsUrl),
    brandColour: v.optional(v.pipe(v.string('must be a colour'), v.trim(), v.regex(/^#[0-9A-Fa-f]{6}$/, 'must be a colour as #rrggbb (six hexadecimal digits)'), v.toLowerCase())),
    postalAddress: v.optional(text(300, true)),
    privacyUrl: v.optional(httpsUrl),
  },
  'unknown setting',
);
export type BrandingInput = v.InferInput<typeof BrandingSchema>;

/** The publisher of a client's pages: its branding, named by its id when it set no display name. */
export function publisherOf(client: { id: string; branding?: Branding } | undefined, clientId: string): Publisher {
  const b = client?.branding ?? {};
  // Read again at show time: a value stored by an older rule never reaches a page unchecked.
  const parsed = v.safeParse(BrandingSchema, b);
  const safe: Branding = parsed.success ? parsed.output : {};
  return { ...safe, name: safe.displayName ?? clientId };
}

/** WCAG relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Black or white, whichever reads better on `background`: at least 4.58:1 for any colour. */
export function textColourOn(background: string): '#000000' | '#ffffff' {
  return contrastRatio(background, '#000000') >= contrastRatio(background, '#ffffff') ? '#000000' : '#ffffff';
}
