/**
 * Growable typed columns: tens of millions of rows held as plain objects
 * would cost many times the memory and slow every garbage collection.
 */

/** Growable Int32Array. */
export class IntList {
  a: Int32Array;
  n = 0;
  constructor(cap = 1024) {
    this.a = new Int32Array(cap);
  }
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Int32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  get(i: number): number {
    return this.a[i] as number;
  }
  set(i: number, v: number): void {
    this.a[i] = v;
  }
}

function growF64(a: Float64Array, cap: number): Float64Array<ArrayBuffer> {
  const b = new Float64Array(cap);
  b.set(a);
  return b;
}

function growI32(a: Int32Array, cap: number): Int32Array<ArrayBuffer> {
  const b = new Int32Array(cap);
  b.set(a);
  return b;
}

/** Column-wise storage of the accepted relationships and their evidence summaries. */
export class EdgeStore {
  n = 0;
  private cap = 0;
  sup = new Int32Array(0);
  cus = new Int32Array(0);
  label = new Int32Array(0);
  line = new Int32Array(0);
  evCount = new Int32Array(0);
  evTypes = new Int32Array(0);
  conf = new Float64Array(0);
  status = new Float64Array(0);
  latest = new Float64Array(0);
  latestFin = new Float64Array(0);
  lastMod = new Float64Array(0);
  evMax = new Float64Array(0);
  evMaxFin = new Float64Array(0);
  hs: string[] = [];

  /** Makes room for one more edge; returns its number. */
  next(): number {
    if (this.n === this.cap) {
      const cap = Math.max(4096, this.cap * 2);
      this.sup = growI32(this.sup, cap);
      this.cus = growI32(this.cus, cap);
      this.label = growI32(this.label, cap);
      this.line = growI32(this.line, cap);
      this.evCount = growI32(this.evCount, cap);
      this.evTypes = growI32(this.evTypes, cap);
      this.conf = growF64(this.conf, cap);
      this.status = growF64(this.status, cap);
      this.latest = growF64(this.latest, cap);
      this.latestFin = growF64(this.latestFin, cap);
      this.lastMod = growF64(this.lastMod, cap);
      this.evMax = growF64(this.evMax, cap);
      this.evMaxFin = growF64(this.evMaxFin, cap);
      this.cap = cap;
    }
    return this.n++;
  }
}
