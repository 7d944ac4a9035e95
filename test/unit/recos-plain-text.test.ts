import fc from 'fast-check';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { plainText, withoutMarkup } from '../../shared/recos/plain-text.js';
import { ArticleInputSchema, TrackBodySchema } from '../../shared/recos/schemas.js';

/** Markup an HTML parser would start at: `<` followed by a letter, `!`, `/` or `?`. */
const MARKUP = /<[A-Za-z!/?]/;
// eslint-disable-next-line no-control-regex -- finding control characters is this pattern's purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

describe('plainText', () => {
  it.each([
    ['<img src=x onerror=alert(2)>', ''],
    ['Breaking: <script>alert(1)</script> news', 'Breaking: alert(1) news'],
    ['a <b>bold</b> move', 'a bold move'],
    ['<<b>script>alert(1)<</b>/script>', 'script>alert(1)/script>'],
    ['<scr<b>ipt>', 'ipt>'],
    ['<img src=x onerror=alert(1)//', ''],
    ['<!-- hidden --> shown', 'shown'],
    ['Why 1 < 2 & 3 > 2', 'Why 1 < 2 & 3 > 2'],
    ['1 << 2', '1 << 2'],
    ['Tom &amp; Jerry &lt;3', 'Tom &amp; Jerry &lt;3'],
    ['line one\nline two\ttab\u0000nul\u007fdel\u0085nel', 'line one line two tabnuldelnel'],
    ['<\u0000script>x', 'x'],
    ['  Café 😀  ', 'Café 😀'],
  ])('%j is stored as %j', (input, expected) => {
    expect(plainText(input)).toBe(expected);
  });

  it('never leaves markup or control characters, is idempotent, and never lengthens the text (any string, tag-heavy strings)', () => {
    const tagHeavy = fc.array(fc.constantFrom('<', '>', '/', '!', '?', 'a', 'b', ' ', '\n', '\u0000', '\u0085', '&lt;', '-', '"'), { maxLength: 60 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.oneof(fc.string(), tagHeavy), (input) => {
        const out = plainText(input);
        expect(out).not.toMatch(MARKUP);
        expect(out).not.toMatch(CONTROL);
        expect(plainText(out)).toBe(out);
        expect(out.length).toBeLessThanOrEqual(input.length);
      }),
      { numRuns: 5000 },
    );
  });

  it('is linear: a megabyte of hostile openers takes milliseconds', () => {
    for (const unit of ['<a', '<', '<<a>', '<a <a ', '\u0000<']) {
      const input = unit.repeat(Math.ceil(1_000_000 / unit.length));
      const started = performance.now();
      expect(withoutMarkup(plainText(input))).not.toMatch(MARKUP);
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });
});

describe('text fields of the catalogue and tracking are plain text', () => {
  it('title, description, category and themes lose markup and control characters; lengths are checked as sent', () => {
    const body = {
      url: 'https://text.example/a',
      title: '<img src=x onerror=alert(1)>Hello\u0000 <b>world</b>',
      description: 'One\ntwo <script>x</script>',
      category: '<i>World</i>',
      themes: ['<b>Climate</b>', 'a<script>,b'],
    };
    const expected = { title: 'Hello world', description: 'One two x', category: 'World', themes: ['climate', 'a', 'b'] };
    expect(v.parse(ArticleInputSchema, body)).toMatchObject(expected);
    expect(v.parse(TrackBodySchema, { user_id: 'u', ...body })).toMatchObject(expected);
    const long = v.safeParse(ArticleInputSchema, { url: 'https://text.example/a', title: `<b>${'t'.repeat(500)}</b>` });
    expect(long.issues?.[0].message).toBe('must be at most 500 characters');
  });

  it('an image URL is stored in its standard serialisation (no quote or angle bracket can close an attribute)', () => {
    const out = v.parse(ArticleInputSchema, { url: 'https://text.example/a', image: ' https://cdn.example/a.jpg"onerror="alert(1)<x> ' });
    expect(out.image).toBe('https://cdn.example/a.jpg%22onerror=%22alert(1)%3Cx%3E');
  });
});
