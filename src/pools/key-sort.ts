/**
 * A stable sort of a listing's matches by their sort keys (proxy-listing.ts):
 * an LSD radix sort over typed arrays, 11 bits a pass, as many passes as the
 * keys' range needs (latency: 2-3, uptime: 2, checked: 4-5): several times
 * faster than a comparator sort (bench/RESULTS.md "Working txt from memory
 * (issue 29)"). Pure.
 *
 * Keys must be integers (keyOf's are: milliseconds, ppm, microseconds of a
 * whole millisecond); a key that is not makes it fall back to a comparator
 * sort, as stable.
 */

const BITS = 11;
const RADIX = 1 << BITS;
const TWO_32 = 4_294_967_296;

/**
 * The positions of `keys` in their order, ascending or descending; equal
 * keys keep the order of their positions.
 */
export function sortByKey(keys: Float64Array, desc: boolean): Int32Array {
  const m = keys.length;
  if (m < 2) return new Int32Array(m);
  let min = Infinity;
  let max = -Infinity;
  let whole = true;
  for (let i = 0; i < m; i++) {
    const k = keys[i]!;
    if (k < min) min = k;
    if (k > max) max = k;
    if (!Number.isInteger(k)) whole = false;
  }
  if (!whole || max - min >= 2 ** 53) {
    return Int32Array.from({ length: m }, (_, i) => i).sort((a, b) => (desc ? keys[b]! - keys[a]! : keys[a]! - keys[b]!) || a - b);
  }
  // each key as a distance from the first in the order, in two 32-bit words
  const lo = new Uint32Array(m);
  const hi = new Uint32Array(m);
  for (let i = 0; i < m; i++) {
    const d = desc ? max - keys[i]! : keys[i]! - min;
    const h = Math.floor(d / TWO_32);
    hi[i] = h;
    lo[i] = d - h * TWO_32;
  }
  const range = max - min;
  let bits = 0;
  while (bits < 53 && 2 ** bits <= range) bits++;
  let a = new Int32Array(m);
  let b = new Int32Array(m);
  for (let i = 0; i < m; i++) a[i] = i;
  const count = new Int32Array(RADIX);
  // passes over the low word, then (a range past 32 bits) the high word
  for (let p = 0; p < bits; ) {
    const word = p < 32 ? lo : hi;
    const shift = p < 32 ? p : p - 32;
    const width = p < 32 ? Math.min(BITS, 32 - p) : BITS;
    const mask = (1 << width) - 1;
    count.fill(0);
    for (let i = 0; i < m; i++) count[(word[i]! >>> shift) & mask]!++;
    let sum = 0;
    for (let d = 0; d <= mask; d++) {
      const c = count[d]!;
      count[d] = sum;
      sum += c;
    }
    for (let i = 0; i < m; i++) {
      const j = a[i]!;
      b[count[(word[j]! >>> shift) & mask]!++] = j;
    }
    [a, b] = [b, a];
    p += width;
  }
  return a;
}
