import type { PathHop, PathStep, PathStepDirection } from '../store/graph-store';

/** Reads one step of the search: relationships out of (`customers`) or into (`suppliers`) `vids`. */
export type ReadSteps = (vids: readonly string[], direction: PathStepDirection) => Promise<PathStep[]>;

/** How much one search may do; past either bound it stops and says so. */
export interface PathSearchBudget {
  /** Relationships read from the store, over all steps of both sides. */
  maxRows: number;
  /** Chain extensions tried while listing the chains of one length. */
  maxSteps: number;
  /** Frontier companies per store read. */
  batch: number;
}

export const PATH_SEARCH_BUDGET: PathSearchBudget = { maxRows: 400_000, maxSteps: 2_000_000, batch: 1_000 };

/** A chain from the source to the target, companies and hops in that order. */
export interface FoundChain {
  vids: string[];
  hops: PathHop[];
  /** The lowest confidence of its hops, missing ones left out; -1 when none has one (such chains rank last). */
  weakest: number;
}

export interface PathSearchResult {
  /** Fewest hops first, then strongest weakest hop, then relationship ids. */
  chains: FoundChain[];
  /** False when the budget ran out before `limit` chains of every length up to the bound were ranked. */
  complete: boolean;
  /** Relationships read from the store. */
  rowsRead: number;
  /** Chain extensions tried. */
  steps: number;
}

interface Edge {
  to: string;
  hop: PathHop;
  /** Its confidence; a missing one is Infinity, since it does not lower a chain's weakest hop. */
  rank: number;
}

/** One side of the search: breadth-first distances from its end, expanded a level at a time. */
interface Side {
  direction: PathStepDirection;
  depth: Map<string, number>;
  frontier: string[];
  /** Relationships expanding the frontier would read, as the store last counted them. */
  frontierCost: number;
  level: number;
  /** Nothing is left to expand: every company this side reaches is expanded. */
  done: boolean;
}

const rankOf = (confidence: number | null) => confidence ?? Infinity;
/** A chain's order key from the weakest rank of its hops. */
const weakestOf = (rank: number) => (rank === Infinity ? -1 : rank);

/**
 * The shortest simple supplier chains from `source` to `target` (relationships
 * supplier towards customer), at most `maxHops` long, at most `limit` of them.
 *
 * Breadth-first from both ends, always expanding the side whose next level reads
 * fewer relationships, so a hub at one end costs only as much as the other end
 * needs to meet it. With the source side expanded to depth a and the target side to
 * depth b, every chain of at most a + b hops lies in the relationships read: its
 * first a hops leave companies the source side expanded, and the rest enter
 * companies the target side expanded. Chains of one length are listed only once
 * the two depths reach it, depth first from the source over relationships in
 * order of confidence, pruned by the known distance to the target and, once
 * `limit` chains are held, by the weakest confidence of the worst of them.
 */
export async function searchChains(
  readSteps: ReadSteps,
  query: {
    source: string;
    target: string;
    maxHops: number;
    limit: number;
    sourceDegree: number;
    targetDegree: number;
  },
  budget: PathSearchBudget = PATH_SEARCH_BUDGET,
): Promise<PathSearchResult> {
  const { source, target, maxHops, limit } = query;
  const out = new Map<string, Edge[]>();
  const seenEdges = new Set<string>();
  let unsorted = false;
  let rowsRead = 0;
  let steps = 0;
  const fwd = startSide('customers', source, query.sourceDegree);
  const back = startSide('suppliers', target, query.targetDegree);

  const addEdge = (supplier: string, customer: string, hop: PathHop) => {
    if (seenEdges.has(hop.edge_id)) return;
    seenEdges.add(hop.edge_id);
    unsorted = true;
    const list = out.get(supplier);
    const edge = { to: customer, hop, rank: rankOf(hop.confidence_score) };
    if (list) list.push(edge);
    else out.set(supplier, [edge]);
  };

  /** Expands one level of `side`; false when the row budget ran out before it was whole. */
  const expand = async (side: Side): Promise<boolean> => {
    const next: string[] = [];
    let nextCost = 0;
    for (let i = 0; i < side.frontier.length; i += budget.batch) {
      const rows = await readSteps(side.frontier.slice(i, i + budget.batch), side.direction);
      rowsRead += rows.length;
      for (const r of rows) {
        const hop = {
          edge_id: r.edge_id,
          confidence_score: r.confidence_score,
          latest_evidence_date: r.latest_evidence_date,
        };
        if (side.direction === 'customers') addEdge(r.from, r.to, hop);
        else addEdge(r.to, r.from, hop);
        if (!side.depth.has(r.to)) {
          side.depth.set(r.to, side.level + 1);
          next.push(r.to);
          nextCost += r.toDegree;
        }
      }
      if (rowsRead > budget.maxRows) return false;
    }
    side.level += 1;
    side.frontier = next;
    side.frontierCost = nextCost;
    side.done = next.length === 0;
    return true;
  };

  const chains: FoundChain[] = [];
  for (let length = 1; length <= maxHops && chains.length < limit; length++) {
    // Deepen until every chain of this length lies in what was read.
    while (fwd.level + back.level < length && !(fwd.done || back.done)) {
      const side = fwd.frontierCost <= back.frontierCost ? fwd : back;
      if (rowsRead + side.frontierCost > budget.maxRows || !(await expand(side))) {
        return { chains, complete: false, rowsRead, steps };
      }
    }
    const listed = listChains(length, limit - chains.length);
    if (listed === null) return { chains, complete: false, rowsRead, steps };
    chains.push(...listed);
    // Neither end reaches anything more: no longer chain exists.
    if (fwd.done && back.done) break;
  }
  return { chains, complete: true, rowsRead, steps };

  /** The best `want` chains of exactly `length` hops; null when the step budget ran out. */
  function listChains(length: number, want: number): FoundChain[] | null {
    // Fewest hops still needed from a company to the target: exact within the target
    // side's depth, beyond it at least one more (or unreachable once that side is done).
    const beyond = back.done ? Infinity : back.level + 1;
    const toTarget = (vid: string) => back.depth.get(vid) ?? beyond;
    if (toTarget(source) > length) return [];
    if (unsorted) for (const list of out.values()) list.sort(compareEdges);
    unsorted = false;
    const best: FoundChain[] = [];
    const vids = [source];
    const hops: PathHop[] = [];
    const onPath = new Set([source]);
    const stepLimit = steps + budget.maxSteps;
    let exhausted = false;

    const walk = (at: string, weakest: number): void => {
      if (exhausted) return;
      const left = length - hops.length;
      if (left === 0) {
        if (at === target)
          offer(best, want, { vids: [...vids], hops: [...hops], weakest: weakestOf(weakest) });
        return;
      }
      if (at === target) return;
      for (const e of out.get(at) ?? []) {
        if (++steps > stepLimit) {
          exhausted = true;
          return;
        }
        // Edges come strongest first (missing confidences before all): once one would
        // make the chain worse than the worst one held, so would every edge after it.
        const w = Math.min(weakest, e.rank);
        if (best.length === want && w < best[best.length - 1]!.weakest) return;
        if (onPath.has(e.to) || toTarget(e.to) > left - 1) continue;
        onPath.add(e.to);
        vids.push(e.to);
        hops.push(e.hop);
        walk(e.to, w);
        hops.pop();
        vids.pop();
        onPath.delete(e.to);
        if (exhausted) return;
      }
    };
    walk(source, Infinity);
    return exhausted ? null : best;
  }
}

function compareEdges(a: Edge, b: Edge): number {
  return b.rank - a.rank || (a.hop.edge_id < b.hop.edge_id ? -1 : a.hop.edge_id > b.hop.edge_id ? 1 : 0);
}

/** Orders chains of one length: strongest weakest hop first, then by relationship ids. */
export function compareFound(a: FoundChain, b: FoundChain): number {
  if (a.hops.length !== b.hops.length) return a.hops.length - b.hops.length;
  if (a.weakest !== b.weakest) return b.weakest - a.weakest;
  for (let k = 0; k < a.hops.length; k++) {
    const x = a.hops[k]!.edge_id;
    const y = b.hops[k]!.edge_id;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** Keeps the best `want` chains in order, dropping the worst when full. */
function offer(best: FoundChain[], want: number, chain: FoundChain): void {
  if (best.length === want && compareFound(chain, best[best.length - 1]!) >= 0) return;
  let i = best.length;
  while (i > 0 && compareFound(chain, best[i - 1]!) < 0) i--;
  best.splice(i, 0, chain);
  if (best.length > want) best.pop();
}

/** One end of the search before its first step: the end company alone, at depth 0. */
function startSide(direction: Side['direction'], start: string, degree: number): Side {
  return {
    direction,
    depth: new Map([[start, 0]]),
    frontier: [start],
    frontierCost: degree,
    level: 0,
    done: false,
  };
}
