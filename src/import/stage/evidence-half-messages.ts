/**
 * What the staging thread and the thread reading the second part of evidence.csv
 * (evidence-half.ts) tell each other; stage/evidence.ts starts that thread and merges its result.
 */
import type { MessagePort } from 'node:worker_threads';
import type { RejectedRow } from '../stage-result';
import type { AsciiIndexSnapshot } from '../string-index';

/** What the thread is started with. */
export interface EvidenceHalfData {
  inputDir: string;
  stagingDir: string;
  maxRejected: number;
  /** Byte offset of the first line it reads: a record boundary, if the guess holds. */
  start: number;
  nEdges: number;
  edgeIds: AsciiIndexSnapshot;
  rejectedEdges: Map<string, number>;
  /** To the evidence worker (WorkerSink.connect). */
  port: MessagePort;
}

/** The staging thread's one message: the header's columns, once it has checked them. */
export interface EvidenceHalfRequest {
  type: 'header';
  names: string[];
}

/** What it read, for the staging thread to merge. Lines count from 1 at `start`. */
export interface EvidenceHalfResult {
  rows: number;
  items: number;
  rejected: RejectedRow[];
  warnings: RejectedRow[];
  warningCount: number;
  /** Fingerprints of the accepted ids. */
  fingerprints: Float64Array<ArrayBuffer>;
  evCount: Int32Array<ArrayBuffer>;
  evTypes: Int32Array<ArrayBuffer>;
  evMax: Float64Array<ArrayBuffer>;
  evMaxFin: Float64Array<ArrayBuffer>;
  /** Evidence types in the order of their bits in evTypes. */
  types: string[];
  /** Types past the first 30, per edge. */
  extraTypes: [number, string[]][];
  /** Ids of its rejected rows, where they were valid ids. */
  rejectedIds: string[];
  /** A row reused the id of a rejected row: its reason names that row's line, counted from `start`. */
  idReused: boolean;
}

export type EvidenceHalfReply =
  | { type: 'read'; rows: number; bytes: number }
  | { type: 'done'; result: EvidenceHalfResult }
  /** What it read cannot be merged as it is; the staging thread reads the whole file instead. */
  | { type: 'again'; reason: string };
