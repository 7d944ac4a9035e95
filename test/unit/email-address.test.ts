/**
 * The address rule (shared/mail/address.ts, docs/api.md "Email addresses"),
 * table-driven. The addresses are facts taken from public test corpora of
 * address validators (Dominic Sayers' isemail tests, RFC 3696 §3 examples,
 * Wikipedia's "Email address" examples, validator.js' isEmail cases) and
 * judged by this service's written rule: valid = accepted.
 */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { recordToLine } from '../../shared/imports/csv.js';
import { emailProblem, emailSchema, isEmail } from '../../shared/mail/address.js';
import { parseSubscriberLine } from '../../shared/subscribers/parse.js';

const l63 = 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijk';
const l64 = `${l63}l`;
const label63 = 'a'.repeat(63);
/** A domain of `n` characters. */
const domainOf = (n: number) => {
  const labels: string[] = [];
  let left = n - 4; // ".com"
  while (left > 0) {
    const size = Math.min(63, left - (labels.length ? 1 : 0));
    if (size <= 0) break;
    labels.push('d'.repeat(size));
    left -= size + (labels.length > 1 ? 1 : 0);
  }
  return `${labels.join('.')}.com`;
};

/** [address, accepted, where it comes from / why]. */
const table: Array<[string, boolean, string]> = [
  // Everyday addresses
  ['simple@example.com', true, 'wikipedia'],
  ['very.common@example.com', true, 'wikipedia'],
  ['FirstName.LastName@EasierReading.org', true, 'wikipedia, mixed case'],
  ['x@example.com', true, 'wikipedia, one-letter local part'],
  ['long.email-address-with-hyphens@and.subdomains.example.com', true, 'wikipedia'],
  ['user.name+tag+sorting@example.com', true, 'wikipedia, + tags'],
  ['name/surname@example.com', true, 'wikipedia, slash'],
  ['admin@example.co', true, 'short TLD'],
  ['example@s.example', true, 'wikipedia'],
  ['mailhost!username@example.org', true, 'wikipedia, bang path'],
  ['user%example.com@example.org', true, 'wikipedia, percent routing'],
  ['user-@example.org', true, 'wikipedia, trailing hyphen in local part'],
  ['test@iana.org', true, 'isemail'],
  ['test@nominet.org.uk', true, 'isemail'],
  ['test@about.museum', true, 'isemail'],
  ['a@iana.org', true, 'isemail'],
  ['test.test@iana.org', true, 'isemail'],
  ['123@iana.org', true, 'isemail, numeric local part'],
  ['test@123.com', true, 'isemail, numeric label'],
  ['test@mason-dixon.com', true, 'isemail, hyphen'],
  ['test@c--n.com', true, 'isemail, double hyphen'],
  ['user@ex--ample.com', true, 'double hyphen in a label'],
  ['xn--test@iana.org', true, 'isemail'],
  ['a@b.c', true, 'one-letter TLD is syntax'],
  ['a@b.co', true, ''],
  ['x@x.x', true, ''],
  ['a@1.com', true, 'all-digit label that is not the TLD'],
  ['a@1a.com', true, ''],
  ['USER@EXAMPLE.COM', true, 'upper case'],
  ['test@iana.o', true, ''],
  // Apostrophes, &, =, + and the rest of atext
  ["o'brien@example.com", true, 'apostrophe'],
  ["O'Brien@Example.IE", true, 'apostrophe, mixed case'],
  ["d'angelo@example.it", true, 'apostrophe'],
  ["mary.o'neil@example.co.uk", true, 'apostrophe after a dot'],
  ['tom&jerry@example.com', true, 'ampersand'],
  ['a=b@example.com', true, 'equals'],
  ['user+mailbox/department=shipping@example.com', true, 'RFC 3696'],
  ['customer/department=shipping@example.com', true, 'RFC 3696'],
  ['$A12345@example.com', true, 'RFC 3696'],
  ['!def!xyz%abc@example.com', true, 'RFC 3696'],
  ['_somename@example.com', true, 'RFC 3696'],
  ["!#$%&'*+-/=?^_`{}|~@example.org", true, 'isemail, every atext special'],
  ['-@example.com', true, 'hyphen alone'],
  ['--@example.com', true, ''],
  ['{}@example.com', true, ''],
  ['|@example.com', true, ''],
  ['~@example.com', true, ''],
  ['`@example.com', true, ''],
  ['^@example.com', true, ''],
  ['?@example.com', true, ''],
  ['*@example.com', true, ''],
  ['#@example.com', true, ''],
  ['+@example.com', true, ''],
  ['=@example.com', true, ''],
  ["'@example.com", true, ''],
  ['&@example.com', true, ''],
  ['a+b+c@example.com', true, ''],
  ['first.middle.last@example.com', true, ''],
  ['a.b-c_d@example.com', true, ''],
  // Punycode (internationalised domains in ASCII form)
  ['user@xn--mnchen-3ya.de', true, 'punycode münchen.de'],
  ['a@b.xn--p1ai', true, 'punycode .рф'],
  ['test@xn--hxajbheg2az3al.xn--jxalpdlp', true, 'isemail, punycode TLD'],
  ['user@xn--bcher-kva.example', true, 'punycode bücher'],
  ['info@xn--fsqu00a.xn--0zwm56d', true, 'punycode 例子.测试'],
  ['user@xn--80ak6aa92e.com', true, 'punycode'],
  // Length limits
  [`${l63}@iana.org`, true, 'isemail, 63-character local part'],
  [`${l64}@iana.org`, true, '64-character local part'],
  [`${l64}m@iana.org`, false, '65-character local part'],
  [`test@${label63}.com`, true, '63-character label'],
  [`test@${label63}a.com`, false, '64-character label'],
  [`a@${domainOf(252)}`, true, '254 characters in all'],
  [`ab@${domainOf(252)}`, false, '255 characters in all'],
  [`${'a'.repeat(64)}@${domainOf(189)}`, true, '254 characters with a 64-character local part'],
  [`${'a'.repeat(64)}@${domainOf(190)}`, false, '255 characters with a 64-character local part'],
  ['1234567890123456789012345678901234567890123456789012345678901234+x@example.com', false, 'wikipedia, local part too long'],
  // Dots
  ['.test@iana.org', false, 'isemail, leading dot'],
  ['test.@iana.org', false, 'isemail, trailing dot'],
  ['test..iana.org@example.com', false, 'consecutive dots'],
  ['john..doe@example.com', false, 'wikipedia, consecutive dots'],
  ['.@example.com', false, 'dot alone'],
  ['a..b@example.com', false, ''],
  ['test@.iana.org', false, 'isemail, domain starts with a dot'],
  ['test@iana.org.', false, 'isemail, trailing dot in the domain'],
  ['test@iana..com', false, 'isemail, empty label'],
  ['test@example..com', false, 'empty label'],
  ['john.doe@example..com', false, 'wikipedia'],
  // Domain labels
  ['test@-iana.org', false, 'isemail, label starts with a hyphen'],
  ['test@iana-.com', false, 'isemail, label ends with a hyphen'],
  ['test@iana.org-', false, 'isemail, TLD ends with a hyphen'],
  ['test@_example.com', false, 'underscore in the domain'],
  ['i.like.underscores@but_they_are_not_allowed_in_this_part', false, 'wikipedia'],
  ['test@iana/icann.org', false, 'isemail, slash in the domain'],
  ['test@exam,ple.com', false, 'comma in the domain'],
  ['test@exa mple.com', false, 'space in the domain'],
  ['test@iana.123', false, 'isemail, all-numeric TLD'],
  ['test@255.255.255.255', false, 'isemail, dotted quad without brackets'],
  ['a@123.123.123.123', false, 'dotted quad'],
  ['a@b', false, 'single-label domain'],
  ['test@localhost', false, 'single-label domain'],
  ['admin@mailserver1', false, 'wikipedia, local domain name'],
  ['test@com', false, 'TLD alone'],
  ['test@xn--p1ai', false, 'punycode TLD alone'],
  ['postmaster@[123.123.123.123]', false, 'wikipedia, address literal (refused by rule)'],
  ['test@[255.255.255.255]', false, 'isemail, address literal'],
  ['test@[IPv6:::1]', false, 'isemail, IPv6 literal'],
  ['postmaster@[IPv6:2001:0db8:85a3:0000:0000:8a2e:0370:7334]', false, 'wikipedia, IPv6 literal'],
  // Quoted local parts (refused by rule)
  ['"test"@iana.org', false, 'isemail, quoted'],
  ['""@iana.org', false, 'isemail, empty quoted'],
  ['"\\a"@iana.org', false, 'isemail, quoted pair'],
  ['"Abc@def"@example.com', false, 'RFC 3696, quoted @'],
  ['"Fred Bloggs"@example.com', false, 'RFC 3696, quoted space'],
  ['"Joe\\\\Blow"@example.com', false, 'RFC 3696, quoted backslash'],
  ['" "@example.org', false, 'wikipedia, quoted space'],
  ['"john..doe"@example.org', false, 'wikipedia, quoted dots'],
  ['"very.(),:;<>[]\\".VERY.\\"very@\\\\ \\"very\\".unusual"@strange.example.com', false, 'wikipedia'],
  // Missing parts and stray characters
  ['', false, 'empty'],
  ['test', false, 'isemail, no @'],
  ['Abc.example.com', false, 'wikipedia, no @'],
  ['@iana.org', false, 'isemail, no local part'],
  ['test@', false, 'isemail, no domain'],
  ['test@@example.com', false, 'two @'],
  ['A@b@c@example.com', false, 'wikipedia, several @'],
  ['test\\@test@iana.org', false, 'isemail, escaped @'],
  ['Abc\\@def@example.com', false, 'RFC 3696 escape (refused: not a Dot-string)'],
  ['Fred\\ Bloggs@example.com', false, 'RFC 3696 escape'],
  ['Joe.\\\\Blow@example.com', false, 'RFC 3696 escape'],
  ['a"b(c)d,e:f;g<h>i[j\\k]l@example.com', false, 'wikipedia, specials unquoted'],
  ['just"not"right@example.com', false, 'wikipedia'],
  ['this is"not\\allowed@example.com', false, 'wikipedia'],
  ['this\\ still\\"not\\\\allowed@example.com', false, 'wikipedia'],
  ['(comment)test@iana.org', false, 'isemail, comment'],
  ['test@iana.org(comment)', false, 'isemail, comment'],
  ['test@(comment)iana.org', false, 'isemail, comment'],
  ['test @iana.org', false, 'isemail, space before @'],
  ['test@ iana .com', false, 'spaces in the domain'],
  ['te st@example.com', false, 'space in the local part'],
  ['test\t@example.com', false, 'tab'],
  ['user\u0000@example.com', false, 'NUL'],
  ['a@b.co\r\nBcc: x@y.z', false, 'header injection'],
  ['<test@example.com>', false, 'angle brackets'],
  ['Test <test@example.com>', false, 'display name'],
  ['mailto:test@example.com', false, 'URI scheme'],
  ['test@example.com;', false, 'trailing semicolon'],
  ['test@example.com,other@example.com', false, 'two addresses'],
  ['a,b@example.com', false, 'comma in the local part'],
  ['a;b@example.com', false, ''],
  ['a:b@example.com', false, ''],
  ['a[b]@example.com', false, ''],
  ['a\\b@example.com', false, ''],
  // Unicode: refused (internationalised domains must come in punycode), lookalikes included
  ['user@münchen.de', false, 'IDN in Unicode: send punycode'],
  ['a@b.рф', false, 'Unicode TLD'],
  ['用户@例子.广告', false, 'wikipedia, EAI'],
  ['ü@x.co', false, 'Unicode local part'],
  ['ünï@x.co', false, ''],
  ['Pelé@example.com', false, 'wikipedia, EAI'],
  ['δοκιμή@παράδειγμα.δοκιμή', false, 'wikipedia, EAI'],
  ['我買@屋企.香港', false, 'wikipedia, EAI'],
  ['\u212Aelvin@example.com', false, 'KELVIN SIGN lower-cases to k'],
  ['user@exampl\u212A.com', false, 'KELVIN SIGN in the domain'],
  ['\u017Fam@example.com', false, 'LATIN SMALL LETTER LONG S upper-cases to S'],
  ['\u0130stanbul@example.com', false, 'LATIN CAPITAL I WITH DOT lower-cases to i + combining dot'],
  ['stra\u00DFe@example.com', false, 'sharp s'],
  ['p\u0430ypal@example.com', false, 'Cyrillic a lookalike'],
  ['user@p\u0430ypal.com', false, 'Cyrillic a lookalike in the domain'],
  ['user\uFF20example.com', false, 'FULLWIDTH COMMERCIAL AT'],
  ['user@example\u3002com', false, 'IDEOGRAPHIC FULL STOP'],
  ['user@example\uFF0Ecom', false, 'FULLWIDTH FULL STOP'],
  ['us\u200Ber@example.com', false, 'ZERO WIDTH SPACE'],
  ['user\u00A0@example.com', false, 'NO-BREAK SPACE inside'],
  ['\uFB01le@example.com', false, 'fi ligature'],
  ['user@e\u0301xample.com', false, 'combining accent'],
  ['test@\uD83D\uDE00.com', false, 'emoji domain'],
  ['\uD83D\uDE00@example.com', false, 'emoji local part'],
];

describe('email address rule (table of public corpus addresses)', () => {
  it('has at least 150 addresses, accepted and refused', () => {
    expect(table.length).toBeGreaterThanOrEqual(150);
    expect(table.filter(([, ok]) => ok).length).toBeGreaterThan(50);
    expect(table.filter(([, ok]) => !ok).length).toBeGreaterThan(50);
  });

  it.each(table)('%j → accepted %s (%s)', (address, accepted) => {
    expect(isEmail(address)).toBe(accepted);
    const parsed = v.safeParse(emailSchema(), address);
    expect(parsed.success).toBe(accepted);
    if (parsed.success) expect(parsed.output).toBe(address.trim().toLowerCase());
    else expect(parsed.issues[0].message).toMatch(/^(must be a string|must be a valid email: it .+)$/);
  });

  it('the list API lines and the CSV import apply the same rule to every address of the table', () => {
    for (const [address, accepted] of table) {
      const line = parseSubscriberLine({ email: address }, 1);
      expect('cause' in line ? false : line.email, address).toBe(accepted ? address.trim().toLowerCase() : false);
      const row = recordToLine(['email'], [address], 2, 'import#1#2');
      if (address.trim() === '') continue; // an empty cell is a missing email
      expect('cause' in row ? false : row.email, address).toBe(accepted ? address.trim().toLowerCase() : false);
    }
  });

  it('trims surrounding whitespace and lower-cases the whole address', () => {
    expect(v.parse(emailSchema(), "  O'Brien+News@Example.IE \n")).toBe("o'brien+news@example.ie");
  });

  it('says why: punycode for a Unicode domain, quoted parts and literals refused, lengths', () => {
    expect(emailProblem('user@münchen.de')).toBe('has a non-ASCII domain; send an internationalised domain in punycode (xn--…)');
    expect(emailProblem('\u212Aelvin@example.com')).toBe('has a non-ASCII local part');
    expect(emailProblem('"x y"@example.com')).toBe('has a quoted local part (not accepted)');
    expect(emailProblem('x@[192.0.2.1]')).toBe('has an address literal as domain (not accepted)');
    expect(emailProblem(`${l64}m@iana.org`)).toBe('has a local part longer than 64 characters');
    expect(emailProblem(`ab@${domainOf(252)}`)).toBe('is longer than 254 characters');
  });
});
