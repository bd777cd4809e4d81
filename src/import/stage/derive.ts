/**
 * The derive step, once every file is read: distinct supplier and customer
 * counts and evidence totals per company, each edge's effective dates, and the
 * cluster relationships (CLUSTER_SUPPLIES), one per pair of clusters that
 * relationships cross, written here as they are summed up. A pair of two
 * single-company clusters is not written: its relationship is summed from the
 * two companies' own relationships when it is read (most pairs are such pairs:
 * 4.1M of 5.1M at a million companies, a quarter of the rows the store loads).
 */
import { BATCH } from './state';
import type { StageState } from './state';
import { typesField } from './evidence';
import { iso, listField, numberText } from './values';

/** Arrays the derive step computes once and the table writers share. */
export interface Derived {
  n: number;
  sup: Int32Array;
  cus: Int32Array;
  latest: Float64Array;
  latestFin: Float64Array;
  /** Cluster number of each edge's supplier and customer. */
  ca: Int32Array;
  cb: Int32Array;
  /** Cross-cluster edges ordered by (ca, cb), but for those between two single-company clusters. */
  byCluster: Int32Array;
  countSup: Int32Array;
  countCus: Int32Array;
  evSup: Float64Array;
  evCus: Float64Array;
}

/** Computes the derived figures and writes the cluster relationships; the other tables follow (write-tables.ts). */
export async function derive(state: StageState): Promise<Derived> {
  const E = state.edges;
  const n = E.n;
  const nc = state.vids.size;
  state.progress({ phase: 'derive', rows: 0, totalRowsHint: n });

  // Distinct supplier / customer counts: with edges ordered by (customer, supplier), equal pairs are adjacent.
  const all = new Int32Array(n);
  for (let e = 0; e < n; e++) all[e] = e;
  const sup = E.sup.subarray(0, n);
  const cus = E.cus.subarray(0, n);
  const byPair = sortBy(sortBy(all, sup, nc), cus, nc);
  const countSup = new Int32Array(nc);
  const countCus = new Int32Array(nc);
  const evSup = new Float64Array(nc);
  const evCus = new Float64Array(nc);
  let ps = -1;
  let pc = -1;
  for (let i = 0; i < n; i++) {
    const e = byPair[i] as number;
    const s = sup[e] as number;
    const c = cus[e] as number;
    if (s !== ps || c !== pc) {
      countSup[c] = (countSup[c] as number) + 1;
      countCus[s] = (countCus[s] as number) + 1;
      ps = s;
      pc = c;
    }
    const k = E.evCount[e] as number;
    evSup[c] = (evSup[c] as number) + k;
    evCus[s] = (evCus[s] as number) + k;
  }

  // Effective per-edge dates: the file's value, else the evidence maximum.
  const latest = E.latest;
  const latestFin = E.latestFin;
  for (let e = 0; e < n; e++) {
    if (Number.isNaN(latest[e])) latest[e] = E.evMax[e] as number;
    if (Number.isNaN(latestFin[e])) latestFin[e] = E.evMaxFin[e] as number;
  }

  // Cluster edges: cross-cluster edges grouped by (supplier cluster, customer cluster), but for
  // those between two single-company clusters (see the top of this file).
  const clusterOf = state.clusterOf;
  const clusterSize = state.clusterSize;
  const nClusters = state.clusterCid.length;
  const ca = new Int32Array(n);
  const cb = new Int32Array(n);
  const stored = (e: number) => {
    const a = ca[e] as number;
    const b = cb[e] as number;
    return a !== b && (clusterSize[a] !== 1 || clusterSize[b] !== 1);
  };
  let cross = 0;
  for (let e = 0; e < n; e++) {
    ca[e] = clusterOf[sup[e] as number] as number;
    cb[e] = clusterOf[cus[e] as number] as number;
    if (stored(e)) cross++;
  }
  const crossEdges = new Int32Array(cross);
  cross = 0;
  for (let e = 0; e < n; e++) if (stored(e)) crossEdges[cross++] = e;
  const byCluster = sortBy(sortBy(crossEdges, cb, nClusters), ca, nClusters);
  const d: Derived = {
    n,
    sup,
    cus,
    latest,
    latestFin,
    ca,
    cb,
    byCluster,
    countSup,
    countCus,
    evSup,
    evCus,
  };
  const cs = state.writer('CLUSTER_SUPPLIES');
  // Hot loops live in small synchronous functions that the JIT optimises well;
  // this async function only awaits the writers between batches.
  for (let i = 0; i < byCluster.length;) {
    i = writeClusterEdges(state, d, i, BATCH);
    if (cs.full) await cs.flush();
  }
  state.progress({ phase: 'derive', rows: n, totalRowsHint: n });
  return d;
}

/** Counting sort of the edge numbers in `order` by key[e] in [0, nKeys); stable. */
function sortBy(order: Int32Array, key: Int32Array, nKeys: number): Int32Array {
  const start = new Int32Array(nKeys + 1);
  for (let i = 0; i < order.length; i++) {
    const k = (key[order[i] as number] as number) + 1;
    start[k] = (start[k] as number) + 1;
  }
  for (let k = 0; k < nKeys; k++) start[k + 1] = (start[k + 1] as number) + (start[k] as number);
  const out = new Int32Array(order.length);
  for (let i = 0; i < order.length; i++) {
    const e = order[i] as number;
    const k = key[e] as number;
    const at = start[k] as number;
    out[at] = e;
    start[k] = at + 1;
  }
  return out;
}

/** Writes cluster edges from position i of d.byCluster until about `budget` edges are covered; returns the next position. */
function writeClusterEdges(state: StageState, d: Derived, i: number, budget: number): number {
  const E = state.edges;
  const { byCluster, ca, cb, latest } = d;
  const cs = state.writer('CLUSTER_SUPPLIES');
  const stop = Math.min(byCluster.length, i + budget);
  while (i < stop) {
    const first = byCluster[i] as number;
    const a = ca[first] as number;
    const b = cb[first] as number;
    let j = i;
    const ids: string[] = [];
    let conf = 0;
    let date = NaN;
    let mask = 0;
    let extra: Set<string> | undefined;
    while (j < byCluster.length && ca[byCluster[j] as number] === a && cb[byCluster[j] as number] === b) {
      const e = byCluster[j] as number;
      ids.push(state.edgeIds.key(e));
      if ((E.conf[e] as number) > conf) conf = E.conf[e] as number;
      const dt = latest[e] as number;
      if (dt > date || (Number.isNaN(date) && !Number.isNaN(dt))) date = dt;
      mask |= E.evTypes[e] as number;
      const x = state.extraTypes.get(e);
      if (x !== undefined) extra = new Set([...(extra ?? []), ...x]);
      j++;
    }
    if (ids.length > 1) ids.sort();
    const cidA = state.clusterCid[a] as string;
    const cidB = state.clusterCid[b] as string;
    cs.write(
      `${state.vids.key(state.clusterParent[a] as number)}\t${state.vids.key(state.clusterParent[b] as number)}\t${cidA}~${cidB}\t${listField(ids)}\t${numberText(conf)}\t${iso(date)}\t${typesField(state, mask, extra)}\n`,
    );
    state.counts.CLUSTER_SUPPLIES++;
    i = j;
  }
  return i;
}
