/**
 * A binary min-heap of slot numbers ordered by their due time (ties: the
 * lower slot first), the due times read from the owner's table
 * (`due[slot]`, ProxyTable.nextCheck). Pure and allocation-free once sized:
 * the heap and each slot's position are typed arrays. `update(slot)` after a
 * slot's due time changed, `remove(slot)` for one taken out (probed now, or
 * gone). DECISIONS "Pools are actors": the schedule is a due-time structure
 * fed to the probes continuously.
 */
export class DueHeap {
  #heap: Int32Array;
  /** Position of each slot in #heap, -1 when absent. */
  #pos: Int32Array;
  #size = 0;
  #due: Float64Array;

  constructor(due: Float64Array, capacity = due.length) {
    this.#due = due;
    this.#heap = new Int32Array(Math.max(1, capacity));
    this.#pos = new Int32Array(Math.max(1, capacity)).fill(-1);
  }

  get size(): number {
    return this.#size;
  }

  /**
   * The due times now read from `due` (the table grew or was fitted: a new array), room for exactly
   * `capacity` slots (fewer than now only down to the slots the table holds: no slot >= capacity is in the heap).
   */
  resize(due: Float64Array, capacity: number): void {
    this.#due = due;
    if (capacity === this.#pos.length) return;
    const heap = new Int32Array(capacity);
    heap.set(this.#heap.subarray(0, this.#size));
    const pos = new Int32Array(capacity).fill(-1);
    pos.set(this.#pos.subarray(0, Math.min(capacity, this.#pos.length)));
    this.#heap = heap;
    this.#pos = pos;
  }

  has(slot: number): boolean {
    return slot < this.#pos.length && this.#pos[slot]! >= 0;
  }

  /** The slot due first, -1 when empty. */
  peek(): number {
    return this.#size === 0 ? -1 : this.#heap[0]!;
  }

  /** Its due time, Infinity when empty. */
  peekDue(): number {
    return this.#size === 0 ? Infinity : this.#due[this.#heap[0]!]!;
  }

  push(slot: number): void {
    if (this.has(slot)) return this.update(slot);
    const i = this.#size++;
    this.#heap[i] = slot;
    this.#pos[slot] = i;
    this.#up(i);
  }

  /** Takes the slot due first out; -1 when empty. */
  pop(): number {
    if (this.#size === 0) return -1;
    const top = this.#heap[0]!;
    this.#removeAt(0);
    return top;
  }

  update(slot: number): void {
    const i = this.#pos[slot]!;
    if (i < 0) return;
    this.#down(this.#up(i));
  }

  remove(slot: number): void {
    if (!this.has(slot)) return;
    this.#removeAt(this.#pos[slot]!);
  }

  #removeAt(i: number): void {
    const slot = this.#heap[i]!;
    const last = --this.#size;
    this.#pos[slot] = -1;
    if (i === last) return;
    const moved = this.#heap[last]!;
    this.#heap[i] = moved;
    this.#pos[moved] = i;
    this.#down(this.#up(i));
  }

  #less(a: number, b: number): boolean {
    const da = this.#due[a]!;
    const db = this.#due[b]!;
    return da < db || (da === db && a < b);
  }

  #up(i: number): number {
    const h = this.#heap;
    const slot = h[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = h[p]!;
      if (!this.#less(slot, parent)) break;
      h[i] = parent;
      this.#pos[parent] = i;
      i = p;
    }
    h[i] = slot;
    this.#pos[slot] = i;
    return i;
  }

  #down(i: number): void {
    const h = this.#heap;
    const n = this.#size;
    const slot = h[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.#less(h[r]!, h[l]!) ? r : l;
      const child = h[c]!;
      if (!this.#less(child, slot)) break;
      h[i] = child;
      this.#pos[child] = i;
      i = c;
    }
    h[i] = slot;
    this.#pos[slot] = i;
  }
}
