/**
 * The plain text the catalogue stores (titles, descriptions, categories,
 * themes from the API, tracking and feeds): no tag, no comment, no control
 * character. What a page gets back can still contain `<`, `>`, `&`, quotes:
 * it is text, to be inserted as text (docs/security.md).
 */

/** Whitespace controls (tab, line feed, vertical tab, form feed, carriage return) become a space; the other C0 controls, DEL and the C1 controls go. */
// eslint-disable-next-line no-control-regex -- finding control characters is this pattern's purpose
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// eslint-disable-next-line no-control-regex -- as above
const NEEDS_WORK = /[<\u0000-\u001f\u007f-\u009f]/;

const controlReplacement = (c: string) => (c >= '\t' && c <= '\r' ? ' ' : '');

/**
 * A character after `<` that makes an HTML parser start markup there (a
 * start or end tag, a comment, a doctype, a processing instruction): an
 * ASCII letter, `!`, `/` or `?` (HTML's tokenizer, "tag open state").
 */
const opensMarkup = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '!' || c === '/' || c === '?');

/**
 * `text` without markup: each `<` that would open markup is dropped up to
 * the next `>` (as a browser ends a tag there, whatever `<` it crosses), or
 * to the end when no `>` follows (an unclosed tag would swallow whatever a
 * page appends). A lone `<` stays, unless what follows it once the markup is
 * gone would open markup itself (`<<b>x`). One pass, linear time; the result
 * has no `<` followed by a letter, `!`, `/` or `?`, so removing markup again
 * changes nothing.
 */
export function withoutMarkup(text: string): string {
  const out: string[] = [];
  let pending = 0;
  const emit = (chunk: string) => {
    if (chunk === '') return;
    if (pending > 0 && !opensMarkup(chunk[0])) out.push('<'.repeat(pending));
    pending = 0;
    out.push(chunk);
  };
  let at = 0;
  for (;;) {
    const lt = text.indexOf('<', at);
    if (lt < 0) {
      emit(text.slice(at));
      break;
    }
    emit(text.slice(at, lt));
    if (opensMarkup(text[lt + 1])) {
      const gt = text.indexOf('>', lt + 2);
      if (gt < 0) break;
      at = gt + 1;
    } else {
      pending++;
      at = lt + 1;
    }
  }
  if (pending > 0) out.push('<'.repeat(pending));
  return out.join('');
}

/**
 * Stored text: control characters removed (line breaks and tabs as spaces),
 * then markup removed (withoutMarkup), trimmed. Idempotent. Text without `<`
 * or a control character (nearly every title) is only trimmed: one
 * character-class test, cheap enough for the tracking path.
 */
export function plainText(text: string): string {
  if (!NEEDS_WORK.test(text)) return text.trim();
  return withoutMarkup(text.replace(CONTROL, controlReplacement)).trim();
}
