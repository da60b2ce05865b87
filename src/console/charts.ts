/**
 * The Overview's charts as inline SVG, drawn on the server: no chart library, no script. Each chart
 * is an `img` with a <title> and <desc> saying what it shows and its totals, every bar has a <title>
 * with its figure, and the page puts the numbers in a table beside it. Colours come from classes
 * (console.css), so the page needs no inline style.
 */

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const esc = (s: string | number): string => String(s).replace(/[&<>"']/g, (c) => ESC[c]!);

/** The smallest 1, 2 or 5 times a power of ten at or above `max` (at least 1). */
export function niceMax(max: number): number {
  if (max <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= max)!;
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(2));

export interface StackedBar {
  /** Under the axis (may be empty to skip a label). */
  label: string;
  /** The bar's tooltip head: the bucket in words. */
  title: string;
  parts: { key: string; value: number }[];
}

/** Drawn at about the width it is shown (half the page at 1366 px), so its text stays legible. */
const W = 640;

/** Vertical bars, each a stack of parts (orders by status, attempts delivered and failed). */
export function stackedBars(o: {
  id: string;
  title: string;
  desc: string;
  bars: StackedBar[];
  empty: string;
}): string {
  const H = 220;
  const left = 40;
  const right = 8;
  const top = 10;
  const bottom = 34;
  const plotW = W - left - right;
  const plotH = H - top - bottom;
  const total = (b: StackedBar) => b.parts.reduce((n, p) => n + p.value, 0);
  const max = niceMax(Math.max(0, ...o.bars.map(total)));
  const y = (v: number) => top + plotH - (v / max) * plotH;
  const slot = plotW / Math.max(1, o.bars.length);
  const barW = Math.max(1, slot * 0.8);
  const out: string[] = [head(o.id, W, H, o.title, o.desc)];
  for (let i = 0; i <= 4; i++) {
    const v = (max / 4) * i;
    out.push(
      `<line class="grid" x1="${left}" x2="${W - right}" y1="${y(v)}" y2="${y(v)}"/>`,
      `<text class="tick" x="${left - 6}" y="${y(v) + 4}" text-anchor="end">${esc(fmt(v))}</text>`,
    );
  }
  o.bars.forEach((b, i) => {
    const x = left + i * slot + (slot - barW) / 2;
    let base = 0;
    for (const p of b.parts) {
      if (p.value <= 0) continue;
      const h = (p.value / max) * plotH;
      out.push(
        `<rect class="k-${esc(p.key)}" x="${x.toFixed(1)}" y="${(y(base) - h).toFixed(1)}" width="${barW.toFixed(1)}" height="${h.toFixed(1)}">` +
          `<title>${esc(`${b.title}: ${p.value} ${p.key}`)}</title></rect>`,
      );
      base += p.value;
    }
    if (b.label) {
      out.push(
        `<text class="tick" x="${(x + barW / 2).toFixed(1)}" y="${H - bottom + 16}" text-anchor="middle">${esc(b.label)}</text>`,
      );
    }
  });
  out.push(`<line class="axis" x1="${left}" x2="${W - right}" y1="${y(0)}" y2="${y(0)}"/>`);
  if (o.bars.every((b) => total(b) === 0)) {
    out.push(
      `<text class="empty" x="${left + plotW / 2}" y="${top + plotH / 2}" text-anchor="middle">${esc(o.empty)}</text>`,
    );
  }
  out.push('</svg>');
  return out.join('');
}

/** Horizontal bars, one a row: revenue by product, orders by issuance time. */
export function horizontalBars(o: {
  id: string;
  title: string;
  desc: string;
  rows: { label: string; value: number; text: string }[];
  empty: string;
}): string {
  const rowH = 30;
  const left = 130;
  const right = 190;
  const H = Math.max(1, o.rows.length) * rowH + 10;
  const max = Math.max(0, ...o.rows.map((r) => r.value));
  const plotW = W - left - right;
  const out: string[] = [head(o.id, W, H, o.title, o.desc)];
  o.rows.forEach((r, i) => {
    const yTop = 5 + i * rowH;
    const w = max > 0 ? (r.value / max) * plotW : 0;
    out.push(
      `<text class="label" x="${left - 8}" y="${yTop + rowH / 2 + 5}" text-anchor="end">${esc(r.label)}</text>`,
      `<rect class="k-bar" x="${left}" y="${yTop + 5}" width="${Math.max(w, r.value > 0 ? 2 : 0).toFixed(1)}" height="${rowH - 10}">` +
        `<title>${esc(`${r.label}: ${r.text}`)}</title></rect>`,
      `<text class="value" x="${(left + w + 8).toFixed(1)}" y="${yTop + rowH / 2 + 5}">${esc(r.text)}</text>`,
    );
  });
  if (o.rows.length === 0 || max === 0) {
    out.push(`<text class="empty" x="${W / 2}" y="${H / 2 + 5}" text-anchor="middle">${esc(o.empty)}</text>`);
  }
  out.push('</svg>');
  return out.join('');
}

function head(id: string, w: number, h: number, title: string, desc: string): string {
  return (
    `<svg class="chart" viewBox="0 0 ${w} ${h}" role="img" aria-labelledby="${esc(id)}-t ${esc(id)}-d" preserveAspectRatio="xMinYMin meet">` +
    `<title id="${esc(id)}-t">${esc(title)}</title><desc id="${esc(id)}-d">${esc(desc)}</desc>`
  );
}
