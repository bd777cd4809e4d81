/**
 * clusters.csv: companies grouped under one parent. A cluster without exactly
 * one parent row is dropped whole; every company left outside a cluster is a
 * cluster of its own.
 */
import { INPUT_FILES, ValueError, checkId, normBoolean } from '../format';
import { need, readInputFile } from './read-file';
import type { RowHandler } from './read-file';
import type { StageState } from './state';

export async function stageClusters(state: StageState): Promise<void> {
  state.memberOf = new Int32Array(state.vids.size).fill(-1);
  const clusters: ClusterRows[] = [];
  await readInputFile(state, 'clusters', (ix) => clusterHandler(state, ix, clusters));
  finishClusters(state, clusters);
}

interface ClusterRows {
  no: number;
  cid: string;
  members: number[];
  lines: number[];
  parentLines: number[];
  parent: number;
  rejectedParentLine: number;
}

function clusterHandler(state: StageState, ix: (c: string) => number, clusters: ClusterRows[]): RowHandler {
  const cCid = ix('cid_id');
  const cVid = ix('vid');
  const cParent = ix('is_parent');
  const byCid = new Map<string, ClusterRows>();
  const memberLine = new Map<number, number>();
  let cluster: ClusterRows | null = null;
  let isParent = false;
  const h: RowHandler = {
    at: '',
    row: (f, line) => {
      cluster = null;
      isParent = false;
      h.at = 'cid_id';
      const cid = checkId(need(f, cCid));
      let c = byCid.get(cid);
      if (c === undefined) {
        c = {
          no: clusters.length,
          cid,
          members: [],
          lines: [],
          parentLines: [],
          parent: -1,
          rejectedParentLine: 0,
        };
        byCid.set(cid, c);
        clusters.push(c);
      }
      cluster = c;
      h.at = 'is_parent';
      isParent = normBoolean(need(f, cParent)) === 'true';
      h.at = 'vid';
      const vid = checkId(need(f, cVid));
      const ci = state.company(vid);
      const prev = state.memberOf[ci] as number;
      if (prev >= 0) {
        h.at = '';
        const other = clusters[prev] as ClusterRows;
        throw new ValueError(
          `company "${vid}" is already in cluster "${other.cid}" (line ${memberLine.get(ci) ?? 0})`,
        );
      }
      state.memberOf[ci] = c.no;
      memberLine.set(ci, line);
      c.members.push(ci);
      c.lines.push(line);
      if (isParent) {
        c.parentLines.push(line);
        c.parent = ci;
      }
    },
    onReject: (line) => {
      if (cluster !== null && isParent && cluster.rejectedParentLine === 0) cluster.rejectedParentLine = line;
    },
  };
  return h;
}

/** Drops clusters without exactly one parent, then numbers every cluster, singletons included. */
function finishClusters(state: StageState, clusters: ClusterRows[]): void {
  const n = state.vids.size;
  state.clusterOf = new Int32Array(n).fill(-1);
  const cids: string[] = [];
  const parents: number[] = [];
  const sizes: number[] = [];
  for (const c of clusters) {
    let problem = '';
    if (c.parentLines.length === 0) {
      problem =
        c.rejectedParentLine > 0
          ? `cluster "${c.cid}" has no parent: its parent row (line ${c.rejectedParentLine}) was rejected`
          : `cluster "${c.cid}" has no parent row`;
    } else if (c.parentLines.length > 1) {
      problem = `cluster "${c.cid}" has ${c.parentLines.length} parent rows (lines ${c.parentLines.join(', ')})`;
    } else {
      const same = state.vids.get(c.cid);
      if (same >= 0 && !c.members.includes(same)) {
        problem = `cid_id "${c.cid}" is the vid of a company outside the cluster`;
      }
    }
    if (problem !== '') {
      for (let k = 0; k < c.members.length; k++) {
        state.memberOf[c.members[k] as number] = -1;
        state.reject(INPUT_FILES.clusters.file, c.lines[k] as number, problem);
      }
      continue;
    }
    const idx = cids.length;
    cids.push(c.cid);
    parents.push(c.parent);
    sizes.push(c.members.length);
    for (const m of c.members) state.clusterOf[m] = idx;
  }
  state.realClusters = cids.length;
  for (let i = 0; i < n; i++) {
    if (state.clusterOf[i] !== -1) continue;
    state.clusterOf[i] = cids.length;
    cids.push(state.vids.key(i));
    parents.push(i);
    sizes.push(1);
  }
  state.clusterCid = cids;
  state.clusterParent = Int32Array.from(parents);
  state.clusterSize = Int32Array.from(sizes);
}
