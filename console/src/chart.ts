import { h } from './dom.js';

/**
 * The console's charts, in plain SVG: a budget bar (spent, then reserved, against the budget)
 * and daily bars. Sizes are SVG attributes and classes from the stylesheet, never inline styles
 * (the console's CSP allows no `style` attribute). Text sits in HTML around the SVG, so it keeps
 * its size when the chart is stretched to the panel's width.
 */

const SVG = 'http://www.w3.org/2000/svg';

export function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: SVGElement[]): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

function title(text: string): SVGTitleElement {
  const element = svg('title', {});
  element.textContent = text;
  return element;
}

/** An amount with two decimals at least and six at most: 1 -> "1.00", 0.123 -> "0.123". */
export function amount(value: number): string {
  const six = value.toFixed(6).replace(/0+$/, '');
  const [whole = '0', decimals = ''] = six.split('.');
  return `${whole}.${decimals.padEnd(2, '0')}`;
}

const percent = (part: number, whole: number): number => (whole <= 0 ? (part > 0 ? 100 : 0) : Math.min(100, (part / whole) * 100));

/**
 * Spent (solid) then reserved (lighter) as shares of the budget; past the budget the bar is
 * full and marked over. `label` describes it for assistive technology.
 */
export function budgetBar(spent: number, reserved: number, budget: number, label: string): SVGSVGElement {
  const spentShare = percent(spent, budget);
  const reservedShare = Math.min(100 - spentShare, percent(reserved, budget));
  const over = spent + reserved > budget;
  return svg(
    'svg',
    { class: `budget-bar${over ? ' over' : ''}`, width: '100%', height: 18, role: 'img', 'aria-label': label },
    svg('rect', { class: 'track', x: 0, y: 0, width: '100%', height: 18, rx: 4 }),
    svg('rect', { class: 'spent', x: 0, y: 0, width: `${spentShare}%`, height: 18, rx: 4 }, title(`spent ${amount(spent)}`)),
    svg('rect', { class: 'reserved', x: `${spentShare}%`, y: 0, width: `${reservedShare}%`, height: 18 }, title(`reserved ${amount(reserved)}`)),
  );
}

export interface Bar {
  readonly label: string;
  readonly value: number;
  /** The tooltip. */
  readonly text: string;
}

/**
 * Vertical bars, one per item, scaled to the largest; a zero gets a hairline so the day is
 * visible. The SVG stretches to the width (preserveAspectRatio none); its labels are HTML: the
 * largest value above, the first and last labels below.
 */
export function barChart(bars: readonly Bar[], options: { readonly label: string; readonly unit: (value: number) => string }): HTMLElement {
  const max = Math.max(0, ...bars.map((bar) => bar.value));
  const width = Math.max(1, bars.length) * 10;
  const chart = svg('svg', { class: 'bars', viewBox: `0 0 ${width} 100`, preserveAspectRatio: 'none', role: 'img', 'aria-label': options.label });
  bars.forEach((bar, index) => {
    const height = max === 0 ? 0 : (bar.value / max) * 100;
    chart.append(
      svg(
        'rect',
        {
          class: bar.value > 0 ? 'bar' : 'bar zero',
          x: index * 10 + 1.5,
          y: 100 - Math.max(height, 1),
          width: 7,
          height: Math.max(height, 1),
          'data-label': bar.label,
        },
        title(bar.text),
      ),
    );
  });
  return h(
    'figure',
    { class: 'chart' },
    h('div', { class: 'chart-max' }, max === 0 ? 'nothing yet' : `max ${options.unit(max)}`),
    chart,
    h('div', { class: 'chart-axis' }, h('span', {}, bars[0]?.label ?? ''), h('span', {}, bars.at(-1)?.label ?? '')),
    h('figcaption', { class: 'hint' }, options.label),
  );
}

/** Every UTC day of [start, end) as `YYYY-MM-DD`. */
export function daysOf(start: number, end: number): string[] {
  const days: string[] = [];
  for (let t = start; t < end; t += 86_400) days.push(new Date(t * 1000).toISOString().slice(0, 10));
  return days;
}
