import type { Values } from '../schema-form.ts';
import { one, type Body } from './desk.ts';

/** Rows added or removed by a form's `Add …` and `Remove …` buttons; true when one was pressed. */
export function reshape(body: Body, rows: Map<string, number>, values: Values): boolean {
  const add = one(body._add);
  const remove = one(body._remove);
  if (add) {
    rows.set(add, (rows.get(add) ?? 1) + 1);
    return true;
  }
  const m = /^(.+)\.(\d+)$/.exec(remove);
  if (!m?.[1] || !m[2]) return false;
  const list = m[1];
  const n = rows.get(list) ?? 1;
  // Every later row moves up one, and the last is gone.
  for (let i = Number(m[2]); i < n - 1; i++) {
    const from = `${list}.${i + 1}`;
    for (const k of [...values.keys()].filter((k) => k === `${list}.${i}` || k.startsWith(`${list}.${i}.`))) {
      values.delete(k);
    }
    for (const [k, v] of [...values]) {
      if (k === from || k.startsWith(`${from}.`)) values.set(`${list}.${i}${k.slice(from.length)}`, v);
    }
  }
  const lastRow = `${list}.${n - 1}`;
  for (const k of [...values.keys()]) if (k === lastRow || k.startsWith(`${lastRow}.`)) values.delete(k);
  rows.set(list, Math.max(1, n - 1));
  return true;
}
