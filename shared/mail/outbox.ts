/**
 * The dev-only outbox page (`/dev/outbox/` of the local server): lists the
 * `.eml` files the outbox mailer wrote, newest first, and shows one message.
 * Local only: no route row and no Lambda imports it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import PostalMime from 'postal-mime';
import { escapeHtml } from './html.js';

type Served = { status: number; body: string | Buffer; contentType: string } | undefined;

const page = (title: string, body: string) =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>` +
  `<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:60rem}td,th{padding:.25rem .75rem;text-align:left}pre{white-space:pre-wrap;background:#f4f4f4;padding:1rem}</style>` +
  `</head><body>${body}</body></html>`;

/** Names of the messages in the outbox, newest first. */
export async function outboxFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.eml') && !n.startsWith('.')).sort().reverse();
}

/** Serves `''` (the index), `<name>.eml` (raw) and `<name>.html` (a message decoded). */
export async function serveOutbox(dir: string, path: string): Promise<Served> {
  const files = await outboxFiles(dir);
  if (path === '' || path === 'index.html') {
    const rows = await Promise.all(
      files.slice(0, 200).map(async (name) => {
        const mail = await PostalMime.parse(await readFile(join(dir, name)));
        const to = (mail.to ?? []).map((a) => a.address).join(', ');
        const base = name.slice(0, -'.eml'.length);
        return `<tr><td>${escapeHtml(mail.date ?? '')}</td><td>${escapeHtml(to)}</td><td><a href="${encodeURIComponent(base)}.html">${escapeHtml(mail.subject ?? '(no subject)')}</a></td><td><a href="${encodeURIComponent(name)}">raw</a></td></tr>`;
      }),
    );
    const table = rows.length ? `<table><tr><th>date</th><th>to</th><th>subject</th><th></th></tr>${rows.join('')}</table>` : '<p>No messages yet.</p>';
    return { status: 200, contentType: 'text/html; charset=utf-8', body: page('Outbox', `<h1>Outbox (${files.length})</h1><p>${escapeHtml(dir)}</p>${table}`) };
  }
  let name: string;
  try {
    name = decodeURIComponent(path);
  } catch {
    return undefined; // a malformed escape (`%E0%A4%A`) names no message: 404
  }
  const eml = name.endsWith('.html') ? `${name.slice(0, -'.html'.length)}.eml` : name;
  if (!files.includes(eml)) return undefined;
  const raw = await readFile(join(dir, eml));
  if (name.endsWith('.eml')) return { status: 200, contentType: 'text/plain; charset=utf-8', body: raw };
  const mail = await PostalMime.parse(raw);
  const head = `<p><a href="./">← outbox</a></p><h1>${escapeHtml(mail.subject ?? '')}</h1><p>From ${escapeHtml(mail.from?.address ?? '')} to ${escapeHtml((mail.to ?? []).map((a) => a.address).join(', '))}, ${escapeHtml(mail.date ?? '')}</p>`;
  // The HTML part is shown in a sandboxed frame: it cannot run scripts on this origin.
  const frame = mail.html ? `<h2>HTML</h2><iframe sandbox="allow-popups allow-top-navigation-by-user-activation" style="width:100%;height:24rem;border:1px solid #ccc" srcdoc="${escapeHtml(mail.html)}"></iframe>` : '';
  return { status: 200, contentType: 'text/html; charset=utf-8', body: page(mail.subject ?? 'message', `${head}${frame}<h2>Text</h2><pre>${escapeHtml(mail.text ?? '')}</pre>`) };
}
