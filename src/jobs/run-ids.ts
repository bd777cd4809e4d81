import crypto from 'node:crypto';
import type { RunStore } from './run-store';

/** A run id as the service writes it: a positive integer without leading zeros (one run, one address). */
export const RUN_ID_TEXT = /^[1-9]\d{0,15}$/;

/**
 * Bits of each half of the permuted number: run ids are at most 2^30, within GraphQL's Int (32 bits,
 * signed), which `startTierView` answers with. A billion runs before the store's numbers run out.
 */
const HALF_BITS = 15;
const HALF = 2 ** HALF_BITS;
const HALF_MASK = HALF - 1;
/** Numbers permuted: [0, 2^30). */
const DOMAIN = HALF * HALF;
/** Rounds of the keyed function: over halves this small, more than the four that suffice for wide ones. */
const ROUNDS = 8;

/**
 * The run ids clients see. Every run store numbers runs 1, 2, 3, … in one sequence shared by every
 * API key, so ids handed out as stored would tell a key how many exports the others started between
 * two of its own. Clients see instead the stored number passed through a keyed permutation of
 * [0, 2^30) (a Feistel network over two 15-bit halves, each round a truncated HMAC-SHA256), plus
 * one: distinct for distinct runs, from 1 to 2^30, with neither order nor spacing to read. The key
 * is kept in the jobs database (RunStore.runIdKey), so every process sharing the queue reads and
 * writes the same ids. A number that is no run's id decodes to a stored
 * number no run has (almost always far past the sequence): it is answered as an unknown run.
 */
export class RunIds {
  private readonly roundKeys: Buffer[];

  /** The ids of the runs of `runs`, under the key kept there (made now when there is none yet). */
  static async of(runs: Pick<RunStore, 'runIdKey'>): Promise<RunIds> {
    return new RunIds(await runs.runIdKey(newRunIdKey()));
  }

  constructor(key: string) {
    if (key.length < 32) throw new Error('the run id key must hold at least 32 characters');
    this.roundKeys = Array.from({ length: ROUNDS }, (_, i) =>
      crypto.createHmac('sha256', key).update(`tiergraph-run-id-round:${i}`).digest(),
    );
  }

  /** The id a client sees for the stored run number `stored` (a positive integer below 2^30). */
  toPublic(stored: number): number {
    if (!Number.isSafeInteger(stored) || stored < 1 || stored >= DOMAIN) {
      throw new RangeError(`run number ${stored} is outside 1..2^30-1`);
    }
    let left = Math.floor(stored / HALF);
    let right = stored % HALF;
    for (let i = 0; i < ROUNDS; i++) {
      const next = (left ^ this.round(i, right)) >>> 0;
      left = right;
      right = next;
    }
    return left * HALF + right + 1;
  }

  /** The stored run number of the id a client sent, or null when no run can have it. */
  toStored(publicId: number): number | null {
    if (!Number.isSafeInteger(publicId) || publicId < 1 || publicId > DOMAIN) return null;
    const n = publicId - 1;
    let left = Math.floor(n / HALF);
    let right = n % HALF;
    for (let i = ROUNDS - 1; i >= 0; i--) {
      const previous = (right ^ this.round(i, left)) >>> 0;
      right = left;
      left = previous;
    }
    const stored = left * HALF + right;
    return stored >= 1 ? stored : null;
  }

  /** Round `i`'s function of one half: 15 bits of its HMAC. */
  private round(i: number, half: number): number {
    const input = Buffer.allocUnsafe(4);
    input.writeUInt32BE(half, 0);
    return crypto.createHmac('sha256', this.roundKeys[i]!).update(input).digest().readUInt32BE(0) & HALF_MASK;
  }
}

/** A new key for RunIds: 32 random bytes as base64url (43 characters). */
export function newRunIdKey(): string {
  return crypto.randomBytes(32).toString('base64url');
}
