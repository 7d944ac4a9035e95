/**
 * The one rule for email addresses, used by every route and the CSV import
 * (docs/api.md, "Email addresses"): RFC 5321 mailbox syntax as SMTP servers
 * deliver it.
 *
 * - Surrounding whitespace is trimmed; then the address must be ASCII. An
 *   internationalised domain is accepted in its punycode form (`xn--…`); in
 *   Unicode it is refused with a cause that says so. Refusing non-ASCII
 *   before lower-casing also keeps case-folding lookalikes (U+212A KELVIN
 *   SIGN lower-cases to `k`) from turning into another address.
 * - Local part: a Dot-string (RFC 5321 §4.1.2) of at most 64 characters:
 *   atoms of letters, digits and ! # $ % & ' * + - / = ? ^ _ ` { | } ~
 *   separated by single dots; no leading, trailing or consecutive dots.
 *   Quoted local parts ("john doe"@…) are refused.
 * - Domain: at least two dot-separated labels of letters, digits and
 *   hyphens (LDH, punycode included), each 1 to 63 characters, not starting
 *   or ending with a hyphen; the last label not all digits. Address literals
 *   (user@[192.0.2.1]) and a trailing dot are refused.
 * - At most 254 characters in all (RFC 5321 path limit less the brackets).
 * - The accepted address is lower-cased as a whole (the service treats
 *   addresses as case-insensitive).
 */
import * as v from 'valibot';

export const MAX_EMAIL_LENGTH = 254;
export const MAX_LOCAL_LENGTH = 64;

const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/** Why `raw` (already trimmed) is not an address the service accepts, or undefined when it is. */
export function emailProblem(address: string): string | undefined {
  if (address === '') return 'is empty';
  if (address.length > MAX_EMAIL_LENGTH) return `is longer than ${MAX_EMAIL_LENGTH} characters`;
  const at = address.lastIndexOf('@');
  if (at < 0) return 'has no @';
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  if (/[\u0080-\uffff]/.test(domain)) return 'has a non-ASCII domain; send an internationalised domain in punycode (xn--…)';
  if (/[\u0080-\uffff]/.test(local)) return 'has a non-ASCII local part';
  if (local === '') return 'has an empty local part';
  if (local.startsWith('"')) return 'has a quoted local part (not accepted)';
  if (local.length > MAX_LOCAL_LENGTH) return `has a local part longer than ${MAX_LOCAL_LENGTH} characters`;
  if (!LOCAL_PART.test(local)) return 'has an invalid local part (dots only between characters; no spaces, @, quotes or brackets)';
  if (domain === '') return 'has an empty domain';
  if (domain.startsWith('[')) return 'has an address literal as domain (not accepted)';
  const labels = domain.split('.');
  if (labels.length < 2) return 'has a domain without a dot';
  if (!labels.every((label) => LABEL.test(label))) return 'has an invalid domain (labels of letters, digits and inner hyphens, 1 to 63 characters)';
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return 'has an all-numeric top-level domain';
  return undefined;
}

/**
 * The rule as a JSON Schema for the API document (an address as sent, without surrounding spaces):
 * a Dot-string of at most 64 characters, then LDH labels with a dot, the last not all digits.
 */
export const EMAIL_DOC = {
  type: 'string',
  format: 'email',
  minLength: 5,
  maxLength: MAX_EMAIL_LENGTH,
  pattern: `^(?=[^@]{1,${MAX_LOCAL_LENGTH}}@)${ATOM}(?:\\.${ATOM})*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?![0-9]+$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`,
} as const;

/** True when `address` (trimmed) follows the rule. */
export const isEmail = (address: string): boolean => emailProblem(address.trim()) === undefined;

/**
 * An email address by the rule above: trimmed, checked, lower-cased. `message`
 * is the cause of every failure (routes keep their spec'd wording); without it
 * the cause says what is wrong.
 */
export const emailSchema = (message?: string) =>
  v.pipe(
    v.string(message ?? 'must be a string'),
    v.trim(),
    v.check((s) => emailProblem(s) === undefined, (issue) => message ?? `must be a valid email: it ${emailProblem(issue.input)}`),
    v.toLowerCase(),
  );
