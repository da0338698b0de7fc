/** A line chart in SVG (no library): one line per series, a dashed threshold, the table beside it carries the figures. */

const NS = 'http://www.w3.org/2000/svg';
/** Distinguishable colours, each at least 4.5:1 against white. */
const COLOURS = ['#0b5cad', '#a4161a', '#1b6e20', '#6a3d9a', '#8a4b00', '#00676b', '#4a4a4a', '#b0005a'];

function el(tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** A round step for about four ticks up to `max` (0.05, 0.1, 0.2, 0.25, 0.5, 1, 2, … times a power of ten). */
export function tickStep(max: number): number {
  const raw = max / 4;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const m = raw / pow;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * pow;
}

/** The decimals that print every multiple of `step` exactly (0.25 → 2, 0.1 → 1, 2 → 0). */
export function decimalsOf(step: number): number {
  for (let d = 0; d < 6; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-9) return d;
  return 6;
}

/** The chart and its legend. `values` may hold `null` (too few payments): the line breaks there. */
export function lineChart(
  series: readonly { name: string; values: readonly (number | null)[] }[],
  labels: readonly string[],
  threshold: number,
  title: string,
): HTMLElement {
  const w = 720,
    hgt = 260,
    pad = 36,
    left = 56;
  const top = Math.max(threshold * 1.5, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  const step = tickStep(top);
  const max = Math.ceil(top / step - 1e-9) * step;
  const x = (i: number): number => left + (labels.length <= 1 ? 0 : (i * (w - left - pad)) / (labels.length - 1));
  const y = (v: number): number => hgt - pad - (v / max) * (hgt - 2 * pad);
  const svg = el('svg', { viewBox: `0 0 ${w} ${hgt}`, class: 'chart', role: 'img', 'aria-labelledby': 'chart-title' });
  const t = el('title', { id: 'chart-title' });
  t.textContent = `${title}: one line per feature and the score; the dashed line is the alert threshold ${threshold}. The table below has the figures.`;
  svg.append(t);
  svg.append(el('line', { x1: left, y1: hgt - pad, x2: w - pad, y2: hgt - pad, stroke: '#767676' }));
  svg.append(el('line', { x1: left, y1: pad, x2: left, y2: hgt - pad, stroke: '#767676' }));
  // the y-axis scale: a tick, a label and a faint grid line per step
  const decimals = decimalsOf(step);
  for (let k = 0; k * step <= max + 1e-9; k++) {
    const v = k * step;
    svg.append(el('line', { x1: left - 4, y1: y(v), x2: w - pad, y2: y(v), stroke: k === 0 ? '#767676' : '#e0e0e0' }));
    const t = el('text', {
      x: left - 6,
      y: y(v) + 4,
      'font-size': 11,
      'text-anchor': 'end',
      fill: '#1b1b1b',
      class: 'y-tick',
    });
    t.textContent = v.toFixed(decimals);
    svg.append(t);
  }
  const axis = el('text', {
    x: 12,
    y: hgt / 2,
    'font-size': 11,
    fill: '#1b1b1b',
    transform: `rotate(-90 12 ${hgt / 2})`,
    'text-anchor': 'middle',
  });
  axis.textContent = 'PSI';
  svg.append(axis);
  svg.append(
    el('line', {
      x1: left,
      y1: y(threshold),
      x2: w - pad,
      y2: y(threshold),
      stroke: '#a4161a',
      'stroke-dasharray': '6 4',
    }),
  );
  const yl = el('text', { x: w - pad, y: y(threshold) - 4, 'font-size': 11, fill: '#1b1b1b', 'text-anchor': 'end' });
  yl.textContent = `alert ${threshold}`;
  svg.append(yl);
  series.forEach((s, k) => {
    let d = '';
    s.values.forEach((v, i) => {
      if (v === null) return;
      d += `${d === '' || s.values[i - 1] === null ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    });
    const colour = COLOURS[k % COLOURS.length] ?? '#000';
    if (d !== '')
      svg.append(el('path', { d, fill: 'none', stroke: colour, 'stroke-width': s.name === 'score' ? 3 : 1.5 }));
    // a point with no neighbour draws no line: a dot shows it
    s.values.forEach((v, i) => {
      if (v !== null && (s.values[i - 1] ?? null) === null && (s.values[i + 1] ?? null) === null)
        svg.append(el('circle', { cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 3.5, fill: colour, class: 'lone' }));
    });
  });
  const legend = document.createElement('ul');
  legend.className = 'legend';
  legend.setAttribute('aria-label', 'Legend');
  series.forEach((s, k) => {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = COLOURS[k % COLOURS.length] ?? '#000';
    li.append(sw, s.name);
    legend.append(li);
  });
  const fig = document.createElement('figure');
  const cap = document.createElement('figcaption');
  cap.textContent = title;
  fig.append(svg, legend, cap);
  return fig;
}
