/** ``difflib.get_close_matches`` as Python computes it: what a failed lookup suggests (failures.ts, gateway.ts). */
import { cmp } from "./py.js";

function matchedCount(a: string[], b: string[]): number {
  const b2j = new Map<string, number[]>();
  b.forEach((ch, j) => {
    const list = b2j.get(ch);
    if (list) list.push(j);
    else b2j.set(ch, [j]);
  });
  if (b.length >= 200) {
    const ntest = Math.floor(b.length / 100) + 1;
    for (const [ch, list] of [...b2j]) if (list.length > ntest) b2j.delete(ch);
  }
  let total = 0;
  const queue: [number, number, number, number][] = [[0, a.length, 0, b.length]];
  while (queue.length) {
    const [alo, ahi, blo, bhi] = queue.pop() as [number, number, number, number];
    let besti = alo;
    let bestj = blo;
    let size = 0;
    let j2len = new Map<number, number>();
    for (let i = alo; i < ahi; i++) {
      const next = new Map<number, number>();
      for (const j of b2j.get(a[i] as string) ?? []) {
        if (j < blo) continue;
        if (j >= bhi) break;
        const k = (j2len.get(j - 1) ?? 0) + 1;
        next.set(j, k);
        if (k > size) {
          besti = i - k + 1;
          bestj = j - k + 1;
          size = k;
        }
      }
      j2len = next;
    }
    while (besti > alo && bestj > blo && a[besti - 1] === b[bestj - 1]) {
      besti--;
      bestj--;
      size++;
    }
    while (besti + size < ahi && bestj + size < bhi && a[besti + size] === b[bestj + size]) size++;
    if (size) {
      total += size;
      if (alo < besti && blo < bestj) queue.push([alo, besti, blo, bestj]);
      if (besti + size < ahi && bestj + size < bhi) queue.push([besti + size, ahi, bestj + size, bhi]);
    }
  }
  return total;
}

/** ``difflib.SequenceMatcher(None, a, b).ratio()``. */
export function ratio(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  const length = x.length + y.length;
  return length ? (2 * matchedCount(x, y)) / length : 1;
}

/** ``difflib.get_close_matches(word, possibilities, n, cutoff)``. */
export function closeMatches(word: string, possibilities: string[], n = 3, cutoff = 0.6): string[] {
  const scored: [number, string][] = [];
  for (const x of possibilities) {
    const score = ratio(x, word);
    if (score >= cutoff) scored.push([score, x]);
  }
  scored.sort((p, q) => q[0] - p[0] || cmp(q[1], p[1]));
  return scored.slice(0, n).map((p) => p[1]);
}
