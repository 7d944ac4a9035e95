/**
 * The publisher dashboard (served at /dashboard by the service itself):
 * sign in with the client name and API key, then the lists and their counts,
 * imports with their progress, and the statistics routes as charts with data
 * tables. Built by shared/dashboard/build.ts into one script and one sheet.
 */
// First: uPlot reads navigator.language when it loads (./locale-guard.ts).
import './locale-guard.js';
import 'uplot/dist/uPlot.min.css';
import './dashboard.css';
import { getJson, session, SignedOutError, signIn, type Outcome } from './api.js';
import { destroyCharts, el, lineChart, resizeCharts, type Series } from './charts.js';
import { defaultRange, formatCount, formatDay, formatRatio, formatTime } from './format.js';

interface List {
  id: number;
  name: string;
}
interface Count {
  subscribed: number;
  unsubscribed: number;
  cause: { READER: number; PUBLISHER: number; HARD_BOUNCE: number };
}
interface ImportedFile {
  id: number;
  name: string;
  email_list_id: number;
  status: 'uploaded' | 'processing' | 'done' | 'failed';
  created_at: string;
  finished_at: string | null;
  failure_cause: string | null;
  progress: { lines_read: number; created: number; subscribed: number; unsubscribed: number; data_changed: number; errors: number };
  errors: Array<{ line: number; email: string | null; cause: string }>;
}
interface ListDay {
  date: string;
  subscribed: number;
  unsubscribed: number;
  causes: { READER: number; PUBLISHER: number; HARD_BOUNCE: number };
  subscribers: number;
}
interface EventDay {
  date: string;
  counts: Record<string, number>;
}
interface Block {
  block_key: string;
  settings: { name?: string };
}
interface RecoDay {
  date: string;
  block_key: string;
  variant: string;
  served: number;
  impressions: number;
  clicks: number;
  ctr: number | null;
}

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const IMPORT_REFRESH_MS = 3000;
let importTimer: number | undefined;

function announce(message: string): void {
  $('status').textContent = message;
}

/** Replaces a section's content (after its heading) with `nodes`. */
function fill(id: string, ...nodes: Array<Node | string>): HTMLElement {
  const box = $(id);
  destroyCharts(box);
  box.replaceChildren(...nodes);
  return box;
}

/** The section's content for an answer that is not a body: the route is not deployed yet, or an error with its cause. */
function notShown(id: string, what: string, outcome: Exclude<Outcome<unknown>, { kind: 'ok' }>): void {
  if (outcome.kind === 'missing') fill(id, el('p', { class: 'unavailable' }, `${what}: not available on this service yet (${outcome.cause}).`));
  else fill(id, el('p', { class: 'error', role: 'alert' }, `${what} could not be loaded: ${outcome.cause} (HTTP ${outcome.status}).`));
}

/** Runs a section's loader; a 401 already brought back the sign-in form, anything else is shown in the section. */
async function guarded(id: string, what: string, load: () => Promise<void>): Promise<void> {
  try {
    await load();
  } catch (err) {
    if (err instanceof SignedOutError) return;
    fill(id, el('p', { class: 'error', role: 'alert' }, `${what} could not be loaded: ${err instanceof Error ? err.message : String(err)}`));
  }
}

/** A table; on a phone each row is stacked, every cell under its column's name (data-label), so nothing scrolls sideways. */
function table(caption: string, head: string[], rows: Array<Array<string | Node>>): HTMLElement {
  const body = rows.map((cells) => el('tr', {}, el('th', { scope: 'row' }, cells[0]), ...cells.slice(1).map((c, i) => el('td', { 'data-label': head[i + 1] ?? '' }, c))));
  return el(
    'div',
    { class: 'scroll', role: 'region', tabindex: '0', 'aria-label': caption },
    el('table', { class: 'stack' }, el('caption', {}, caption), el('thead', {}, el('tr', {}, ...head.map((h) => el('th', { scope: 'col' }, h)))), el('tbody', {}, ...body)),
  );
}

function range(): { from: string; to: string } {
  return { from: $<HTMLInputElement>('from').value, to: $<HTMLInputElement>('to').value };
}

async function loadLists(): Promise<void> {
  const lists = await getJson<List[]>('/v1/newsletters/lists');
  if (lists.kind !== 'ok') return notShown('lists', 'Lists', lists);
  const counts = await Promise.all(lists.body.map((l) => getJson<Count>(`/v1/newsletters/lists/${l.id}/subscribers/count`)));
  const rows = lists.body.map((list, i) => {
    const c = counts[i];
    if (c.kind !== 'ok') return [list.name, String(list.id), c.cause, '', '', '', ''];
    const n = c.body;
    return [list.name, String(list.id), formatCount(n.subscribed), formatCount(n.unsubscribed), formatCount(n.cause.READER), formatCount(n.cause.PUBLISHER), formatCount(n.cause.HARD_BOUNCE)];
  });
  fill('lists', table('Subscribers per list', ['List', 'Id', 'Subscribed', 'Unsubscribed', 'By the reader', 'By the publisher', 'Hard bounce'], rows));
  const select = $<HTMLSelectElement>('growth-list');
  const chosen = select.value;
  select.replaceChildren(...lists.body.map((l) => el('option', { value: String(l.id) }, `${l.name} (${l.id})`)));
  if (chosen && lists.body.some((l) => String(l.id) === chosen)) select.value = chosen;
  await guarded('growth', 'List statistics', loadGrowth);
}

async function loadGrowth(): Promise<void> {
  const listId = $<HTMLSelectElement>('growth-list').value;
  if (!listId) return void fill('growth', el('p', {}, 'No list.'));
  const got = await getJson<ListDay[]>(`/v1/stats/lists/${encodeURIComponent(listId)}/daily`, range());
  if (got.kind !== 'ok') return notShown('growth', 'List statistics', got);
  const days = got.body.map((d) => d.date);
  const box = fill('growth');
  const rows = got.body.map((d) => [formatDay(d.date), ...[d.subscribers, d.subscribed, d.unsubscribed, d.causes.READER, d.causes.PUBLISHER, d.causes.HARD_BOUNCE].map(formatCount)]);
  const head = ['Day', 'Subscribers', 'Subscribed', 'Unsubscribed', 'By the reader', 'By the publisher', 'Hard bounce'];
  lineChart(box, 'Subscribers over time', days, [{ label: 'Subscribers', values: got.body.map((d) => d.subscribers) }], { head, rows });
  lineChart(
    box,
    'Subscribed and unsubscribed per day',
    days,
    [
      { label: 'Subscribed', values: got.body.map((d) => d.subscribed) },
      { label: 'Unsubscribed', values: got.body.map((d) => d.unsubscribed) },
    ],
    { head, rows },
  );
}

async function loadEvents(): Promise<void> {
  const got = await getJson<EventDay[]>('/v1/stats/events/daily', range());
  if (got.kind !== 'ok') return notShown('events', 'Events per day', got);
  const types = [...new Set(got.body.flatMap((d) => Object.keys(d.counts)))];
  const rows = got.body.map((d) => [formatDay(d.date), ...types.map((t) => formatCount(d.counts[t] ?? 0))]);
  lineChart(
    fill('events'),
    'Events per day by type',
    got.body.map((d) => d.date),
    types.map((t) => ({ label: t, values: got.body.map((d) => d.counts[t] ?? 0) })),
    { head: ['Day', ...types], rows },
  );
}

async function loadRecommendations(): Promise<void> {
  const [got, blockList] = await Promise.all([getJson<RecoDay[]>('/v1/stats/recommendations/daily', range()), getJson<Block[]>('/v1/blocks')]);
  if (got.kind !== 'ok') return notShown('recos', 'Recommendations', got);
  // The name the publisher gave a block (its `name` setting); without one, or without the blocks route, its key.
  const names = new Map(blockList.kind === 'ok' ? blockList.body.map((b) => [b.block_key, b.settings.name?.trim() || b.block_key]) : []);
  const box = fill('recos');
  const blocks = [...new Set(got.body.map((r) => r.block_key))];
  if (blocks.length === 0) box.append(el('p', {}, 'No recommendations were served in this range.'));
  for (const block of blocks) {
    const mine = got.body.filter((r) => r.block_key === block);
    const days = [...new Set(mine.map((r) => r.date))].sort();
    const variants = [...new Set(mine.map((r) => r.variant))];
    const at = (variant: string, pick: (r: RecoDay) => number | null) => days.map((d) => {
      const row = mine.find((r) => r.date === d && r.variant === variant);
      return row ? pick(row) : null;
    });
    const series: Series[] = variants.flatMap((v) => {
      const suffix = variants.length > 1 ? ` (${v})` : '';
      return [
        { label: `Served${suffix}`, values: at(v, (r) => r.served) },
        { label: `Clicks${suffix}`, values: at(v, (r) => r.clicks) },
        { label: `CTR${suffix}`, values: at(v, (r) => r.ctr), kind: 'ratio' as const },
      ];
    });
    const rows = mine.map((r) => [formatDay(r.date), r.variant, formatCount(r.served), formatCount(r.impressions), formatCount(r.clicks), formatRatio(r.ctr)]);
    const name = names.get(block) ?? block;
    const section = el('section', { class: 'block', 'aria-label': `Block ${name}`, 'data-block-key': block }, el('h3', {}, `Block ${name}`));
    if (name !== block) section.append(el('p', { class: 'note key' }, `Key ${block}`));
    box.append(section);
    lineChart(section, `Block ${name}: served, clicks and CTR`, days, series, { head: ['Day', 'Variant', 'Served', 'Impressions', 'Clicks', 'CTR'], rows });
  }
}

function statusCell(f: ImportedFile): Node {
  if (f.status === 'uploaded' || f.status === 'processing') {
    return el('span', {}, el('progress', { 'aria-label': `File ${f.id} is being imported` }), ` ${f.status}`);
  }
  return document.createTextNode(f.status === 'failed' && f.failure_cause ? `failed: ${f.failure_cause}` : f.status);
}

async function loadImports(): Promise<void> {
  window.clearTimeout(importTimer);
  const got = await getJson<ImportedFile[]>('/v1/files');
  if (got.kind !== 'ok') return notShown('imports', 'Imports', got);
  const files = [...got.body].sort((a, b) => b.id - a.id);
  if (files.length === 0) return void fill('imports', el('p', {}, 'No imports yet.'));
  const rows = files.map((f) => [
    f.name || `File ${f.id}`,
    String(f.id),
    String(f.email_list_id),
    statusCell(f),
    formatCount(f.progress.lines_read),
    formatCount(f.progress.created),
    formatCount(f.progress.subscribed),
    formatCount(f.progress.unsubscribed),
    formatCount(f.progress.data_changed),
    formatCount(f.progress.errors),
    formatTime(f.created_at),
  ]);
  const head = ['File', 'Id', 'List', 'Status', 'Lines read', 'Created', 'Subscribed', 'Unsubscribed', 'Data changed', 'Errors', 'Started'];
  const errorLists = files
    .filter((f) => f.errors.length > 0)
    .map((f) =>
      el(
        'details',
        { class: 'import-errors' },
        el('summary', {}, `First errors of file ${f.id} (${formatCount(f.progress.errors)} in all)`),
        el('ul', {}, ...f.errors.map((e) => el('li', {}, `Line ${formatCount(e.line)}${e.email ? ` (${e.email})` : ''}: ${e.cause}`))),
      ),
    );
  fill('imports', table('Imported files, newest first', head, rows), ...errorLists);
  if (files.some((f) => f.status === 'uploaded' || f.status === 'processing')) importTimer = window.setTimeout(() => void guarded('imports', 'Imports', loadImports), IMPORT_REFRESH_MS);
}

/** Everything, afresh (lists load the chosen list's statistics after them). */
function loadAll(): Promise<unknown> {
  return Promise.all([guarded('lists', 'Lists', loadLists), guarded('imports', 'Imports', loadImports), guarded('events', 'Events per day', loadEvents), guarded('recos', 'Recommendations', loadRecommendations)]);
}

function showSignIn(message = ''): void {
  window.clearTimeout(importTimer);
  for (const id of ['lists', 'growth', 'imports', 'events', 'recos']) fill(id);
  $('board').hidden = true;
  $('signout').hidden = true;
  $('who').textContent = '';
  $('signin').hidden = false;
  $('signin-error').textContent = message;
  $<HTMLInputElement>('key').value = '';
  $<HTMLInputElement>('client').focus();
}

async function showBoard(): Promise<void> {
  $('signin').hidden = true;
  $('board').hidden = false;
  $('signout').hidden = false;
  $('who').textContent = `Signed in as ${session.client() ?? ''}`;
  announce('Loading…');
  await loadAll();
  if (session.token()) announce('Dashboard loaded.');
}

function start(): void {
  const initial = defaultRange();
  $<HTMLInputElement>('from').value = initial.from;
  $<HTMLInputElement>('to').value = initial.to;
  session.onSignedOut((cause) => showSignIn(`Your session has ended (${cause}). Sign in again.`));

  $<HTMLFormElement>('signin-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const client = $<HTMLInputElement>('client').value.trim();
    const key = $<HTMLInputElement>('key');
    $('signin-error').textContent = '';
    void signIn(client, key.value).then((failed) => {
      key.value = '';
      if (failed) {
        $('signin-error').textContent = failed;
        key.focus();
      } else void showBoard();
    });
  });
  $('signout').addEventListener('click', () => {
    session.clear();
    showSignIn('You are signed out.');
  });
  $<HTMLFormElement>('range').addEventListener('submit', (ev) => {
    ev.preventDefault();
    const { from, to } = range();
    if (!from || !to || from > to) {
      $('range-error').textContent = 'Choose a first day that is not after the last day.';
      return;
    }
    $('range-error').textContent = '';
    announce(`Showing ${formatDay(from)} to ${formatDay(to)}.`);
    void loadAll();
  });
  $('growth-list').addEventListener('change', () => void guarded('growth', 'List statistics', loadGrowth));
  let resizing: number | undefined;
  window.addEventListener('resize', () => {
    window.clearTimeout(resizing);
    resizing = window.setTimeout(resizeCharts, 100);
  });

  if (session.token()) void showBoard();
  else showSignIn();
}

start();
