/**
 * Charts (uPlot) with their text alternative: each chart is a figure whose
 * canvas carries a one-line summary (role="img", aria-label), followed by the
 * same numbers as a data table inside a disclosure.
 */
import uPlot from 'uplot';
import { daySeconds, formatCount, formatDay, formatRatio, formatTick } from './format.js';

/** Tick steps of the count axes: whole numbers only (a count of 0.5 readers means nothing). */
const COUNT_STEPS = Array.from({ length: 10 }, (_, e) => [1, 2, 5].map((m) => m * 10 ** e)).flat();

const DAY = 86_400;
/** Tick steps of the day axis: whole days (no hour ticks under a one-day range). */
const DAY_STEPS = [1, 2, 7, 14, 28, 56, 91, 182, 364].map((d) => d * DAY);

function dayRange(xs: ArrayLike<number>): [number, number] {
  const [lo, hi] = [xs[0], xs[xs.length - 1]];
  return lo === hi ? [lo - DAY / 2, hi + DAY / 2] : [lo, hi];
}

/** Okabe–Ito: told apart by people with colour-vision deficiencies. */
const PALETTE = ['#0072B2', '#D55E00', '#009E73', '#CC79A7', '#E69F00', '#56B4E9', '#000000', '#999999'];

export interface Series {
  label: string;
  values: Array<number | null>;
  /** `ratio`: a share (0..1) on the right-hand axis, shown as a percentage. */
  kind?: 'count' | 'ratio';
}

/** An element with attributes and children; text is set as text, never parsed as HTML. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, value);
  node.append(...children);
  return node;
}

const plots = new Map<HTMLElement, uPlot>();

/** Destroys the charts inside `root` (before its content is replaced). */
export function destroyCharts(root: HTMLElement): void {
  for (const [box, plot] of plots) {
    if (root.contains(box)) {
      plot.destroy();
      plots.delete(box);
    }
  }
}

/** Fits every chart to its box's width (window resized, phone turned). */
export function resizeCharts(): void {
  for (const [box, plot] of plots) plot.setSize({ width: Math.max(box.clientWidth, 200), height: plot.height });
}

function summary(title: string, days: string[], series: Series[]): string {
  if (days.length === 0) return `${title}: no data in this range.`;
  const parts = series.map((s) => {
    const values = s.values.filter((x): x is number => typeof x === 'number');
    const fmt = s.kind === 'ratio' ? formatRatio : formatCount;
    if (values.length === 0) return `${s.label}: no values`;
    const total = s.kind === 'ratio' ? '' : `, total ${fmt(values.reduce((a, b) => a + b, 0))}`;
    return `${s.label} from ${fmt(values[0])} to ${fmt(values[values.length - 1])} (highest ${fmt(Math.max(...values))}${total})`;
  });
  return `${title}, ${formatDay(days[0])} to ${formatDay(days[days.length - 1])}: ${parts.join('; ')}.`;
}

/**
 * A line chart over days (YYYY-MM-DD, UTC), appended to `parent` as a figure with its caption and summary;
 * `table`: the data table shown as its text alternative (headers, then rows of cells already formatted).
 */
export function lineChart(parent: HTMLElement, title: string, days: string[], series: Series[], table: { head: string[]; rows: string[][] }): HTMLElement {
  const box = el('div', { class: 'chart', role: 'img', 'aria-label': summary(title, days, series) });
  const rows = table.rows.map((cells) => el('tr', {}, el('th', { scope: 'row' }, cells[0]), ...cells.slice(1).map((c, i) => el('td', { 'data-label': table.head[i + 1] ?? '' }, c))));
  const details = el(
    'details',
    {},
    el('summary', {}, `${title}: data table`),
    el(
      'div',
      { class: 'scroll', role: 'region', tabindex: '0', 'aria-label': `${title}: data table` },
      el('table', { class: 'alt stack' }, el('caption', {}, title), el('thead', {}, el('tr', {}, ...table.head.map((h) => el('th', { scope: 'col' }, h)))), el('tbody', {}, ...rows)),
    ),
  );
  const figure = el('figure', {}, el('figcaption', {}, title), box, details);
  parent.append(figure);
  if (days.length === 0) {
    box.append(el('p', {}, 'No data in this range.'));
    return figure;
  }
  const hasRatio = series.some((s) => s.kind === 'ratio');
  const opts: uPlot.Options = {
    width: Math.max(box.clientWidth, 200),
    height: 220,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    // The days shown, exactly; one day alone with half a day either side (uPlot widened it to years).
    scales: { x: { time: true, range: (u) => dayRange(u.data[0]) }, ...(hasRatio ? { ratio: { range: (_u, _min, max) => [0, Math.max(max, 0.01)] } } : {}) },
    // The x range drawn (seconds, UTC) on the box: what a test or a tool reads of the axis.
    hooks: { setScale: [(u, key) => void (key === 'x' && box.setAttribute('data-x-range', `${u.scales.x.min ?? ''},${u.scales.x.max ?? ''}`))] },
    series: [
      { label: 'Day', value: (_u, v) => (v == null ? '–' : formatDay(new Date(v * 1000).toISOString().slice(0, 10))) },
      ...series.map((s, i) => ({
        label: s.label,
        stroke: PALETTE[i % PALETTE.length],
        width: 2,
        scale: s.kind === 'ratio' ? 'ratio' : 'y',
        dash: s.kind === 'ratio' ? [6, 4] : undefined,
        value: (_u: uPlot, v: number | null) => (v == null ? '–' : s.kind === 'ratio' ? formatRatio(v) : formatCount(v)),
      })),
    ],
    axes: [
      { incrs: DAY_STEPS, values: (_u, ticks) => ticks.map((t) => formatTick(t)) },
      { size: 60, incrs: COUNT_STEPS, values: (_u, ticks) => ticks.map((t) => formatCount(t)) },
      ...(hasRatio ? [{ scale: 'ratio', side: 1, size: 60, grid: { show: false }, values: (_u: uPlot, ticks: number[]) => ticks.map((t) => formatRatio(t)) }] : []),
    ],
  };
  plots.set(box, new uPlot(opts, [days.map(daySeconds), ...series.map((s) => s.values)], box));
  return figure;
}
