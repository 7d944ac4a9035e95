import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { BrandingSchema, contrastRatio, publisherOf, textColourOn } from '../../shared/clients/branding.js';
import { publisherEmailParts, publisherPage, publisherTextFooter } from '../../shared/clients/publisher-html.js';

const problem = (input: unknown) => {
  const out = v.safeParse(BrandingSchema, input);
  return out.success ? undefined : `${out.issues[0].path?.map((p) => String(p.key)).join('.')}: ${out.issues[0].message}`;
};

describe('client branding', () => {
  it('accepts a display name, an https logo and privacy URL, a #rrggbb colour and a postal address with line breaks', () => {
    // Act
    const out = v.parse(BrandingSchema, { displayName: ' Acme News ', logoUrl: 'https://cdn.acme.example/logo.png', brandColour: '#A0B1C2', postalAddress: '1 Main St\nSpringfield', privacyUrl: 'https://acme.example/privacy' });
    // Assess
    expect(out).toEqual({ displayName: 'Acme News', logoUrl: 'https://cdn.acme.example/logo.png', brandColour: '#a0b1c2', postalAddress: '1 Main St\nSpringfield', privacyUrl: 'https://acme.example/privacy' });
  });

  it('refuses each bad value with a cause that names the setting and the problem', () => {
    expect(problem({ logoUrl: 'http://acme.example/logo.png' })).toBe('logoUrl: must be an absolute https URL without user or password');
    expect(problem({ logoUrl: 'javascript:alert(1)' })).toBe('logoUrl: must be an absolute https URL without user or password');
    expect(problem({ logoUrl: 'https://user:pw@acme.example/logo.png' })).toBe('logoUrl: must be an absolute https URL without user or password');
    expect(problem({ privacyUrl: '/privacy' })).toBe('privacyUrl: must be an absolute https URL without user or password');
    expect(problem({ brandColour: 'red' })).toBe('brandColour: must be a colour as #rrggbb (six hexadecimal digits)');
    expect(problem({ brandColour: '#fff;}body{display:none' })).toBe('brandColour: must be a colour as #rrggbb (six hexadecimal digits)');
    expect(problem({ displayName: '  ' })).toBe('displayName: must not be empty');
    expect(problem({ displayName: 'a'.repeat(101) })).toBe('displayName: must be at most 100 characters');
    expect(problem({ displayName: 'Two\nlines' })).toBe('displayName: must be one line without control characters');
    expect(problem({ postalAddress: 'bell\u0007' })).toBe('postalAddress: must not contain control characters (line breaks are fine)');
    expect(problem({ motto: 'x' })).toBe('motto: unknown setting');
  });

  it('names the publisher by its client id without a display name, and never shows a stored value the rule refuses', () => {
    expect(publisherOf(undefined, 'acme')).toEqual({ name: 'acme' });
    expect(publisherOf({ id: 'acme', branding: { displayName: 'Acme' } }, 'acme')).toEqual({ name: 'Acme', displayName: 'Acme' });
    expect(publisherOf({ id: 'acme', branding: { brandColour: 'red;}' } }, 'acme')).toEqual({ name: 'acme' });
  });

  it('writes black or white on the brand colour, whichever contrasts at least 4.5:1', () => {
    for (const colour of ['#ffffff', '#000000', '#777777', '#1a5fb4', '#ffff00', '#767676', '#8a8a8a', '#e01b24']) {
      expect(contrastRatio(colour, textColourOn(colour)), colour).toBeGreaterThanOrEqual(4.5);
    }
  });

  it('escapes every value in the page and the email, and frames nothing without a publisher', () => {
    const publisher = { name: '<b>Acme</b>', logoUrl: 'https://x.example/l.png?a="b"', postalAddress: '<i>1 Main St</i>', privacyUrl: 'https://x.example/p?"' };
    const page = publisherPage('Title', '<p>body</p>', publisher);
    expect(page).not.toMatch(/<b>|<i>/);
    expect(page).toContain('&lt;b&gt;Acme&lt;/b&gt;');
    expect(page).toContain('src="https://x.example/l.png?a=&quot;b&quot;"');
    expect(publisherPage('Link not valid', '<p>x</p>')).not.toMatch(/<header|<footer/);
    const mail = publisherEmailParts(publisher);
    expect(mail.header + mail.footer).not.toMatch(/<b>|<i>/);
    expect(publisherTextFooter({ name: 'Acme' })).toEqual([]);
    expect(publisherTextFooter({ name: 'Acme', postalAddress: '1 Main St\nSpringfield', privacyUrl: 'https://x.example/p' })).toEqual(['--', 'Acme', '1 Main St', 'Springfield', 'Privacy policy: https://x.example/p', '']);
  });
});
