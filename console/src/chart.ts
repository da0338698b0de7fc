/** A line chart in SVG (no library): one line per series, a dashed threshold, the table beside it carries the figures. */

const NS = 'http://www.w3.org/2000/svg';
/** Distinguishable colours, each at least 4.5:1 against white. */
const COLOURS = ['#0b5cad', '#a4161a', '#1b6e20', '#6a3d9a', '#8a4b00', '#00676b', '#4a4a4a', '#b0005a'];

function el(tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
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
    pad = 36;
  const max = Math.max(threshold * 1.5, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  const x = (i: number): number => pad + (labels.length <= 1 ? 0 : (i * (w - 2 * pad)) / (labels.length - 1));
  const y = (v: number): number => hgt - pad - (v / max) * (hgt - 2 * pad);
  const svg = el('svg', { viewBox: `0 0 ${w} ${hgt}`, class: 'chart', role: 'img', 'aria-labelledby': 'chart-title' });
  const t = el('title', { id: 'chart-title' });
  t.textContent = `${title}: one line per feature and the score; the dashed line is the alert threshold ${threshold}. The table below has the figures.`;
  svg.append(t);
  svg.append(el('line', { x1: pad, y1: hgt - pad, x2: w - pad, y2: hgt - pad, stroke: '#767676' }));
  svg.append(el('line', { x1: pad, y1: pad, x2: pad, y2: hgt - pad, stroke: '#767676' }));
  svg.append(
    el('line', {
      x1: pad,
      y1: y(threshold),
      x2: w - pad,
      y2: y(threshold),
      stroke: '#a4161a',
      'stroke-dasharray': '6 4',
    }),
  );
  const yl = el('text', { x: 2, y: y(threshold) - 4, 'font-size': 11, fill: '#1b1b1b' });
  yl.textContent = `alert ${threshold}`;
  svg.append(yl);
  series.forEach((s, k) => {
    let d = '';
    s.values.forEach((v, i) => {
      if (v === null) return;
      d += `${d === '' || s.values[i - 1] === null ? 'M' : 'L'}${x(i).toFixed(1)},${y(v).toFixed(1)}`;
    });
    if (d !== '')
      svg.append(
        el('path', {
          d,
          fill: 'none',
          stroke: COLOURS[k % COLOURS.length] ?? '#000',
          'stroke-width': s.name === 'score' ? 3 : 1.5,
        }),
      );
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
