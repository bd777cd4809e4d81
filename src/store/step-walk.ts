import type { TierCompany, TierRelationship } from '../domain/tier-walk';
import type { TierWalkRequest, TierWalkSink } from './graph-store';
import { countryCode } from '../domain/countries';
import { iso, num, str, toTierCompany, toTierRelationship } from './mappers';
import type { Props } from './mappers';

/** Reads one tier step (`tierview/step-*`) from a frontier, feeding its rows in batches. */
export type StepReader = (vids: readonly string[], onRows: (rows: Props[]) => Promise<void>) => Promise<void>;

/**
 * The stored domicile values (`tierview/domiciles`) that name one of `codes`:
 * stored values are kept as imported, a code or a name in any spelling.
 */
export function domicileSpellings(stored: readonly unknown[], codes: readonly string[]): string[] {
  const wanted = new Set(codes);
  const out: string[] = [];
  for (const value of stored) {
    if (typeof value !== 'string') continue;
    const code = countryCode(value);
    if (code !== null && wanted.has(code)) out.push(value);
  }
  return out.sort();
}

/** The walks' date filter when a request sets none (any_date lets every relationship through). */
export const NO_DATE_FLOOR = '0001-01-01';

/**
 * The parameters of `tierview/step-*` for a request: its filters, or values that
 * let everything through. `spellings`: the stored domicile values of the
 * request's countries (see domicileSpellings); null without a country filter.
 */
export function stepParams(
  request: TierWalkRequest,
  spellings: readonly string[] | null,
): Record<string, unknown> {
  const countries = spellings;
  return {
    // Without a date every relationship passes, one without a date too.
    any_date: request.evidenceFrom === null,
    evidence_from: new Date(`${request.evidenceFrom ?? NO_DATE_FLOOR}T00:00:00Z`),
    min_confidence: request.minConfidence ?? -1,
    all_countries: countries === null,
    // Never an empty list: one engine cannot type it, and the flag above decides anyway.
    countries: countries && countries.length > 0 ? countries : [''],
  };
}

/** True when a request asks for a filter the engine's native walk cannot apply. */
export function needsStepWalk(request: TierWalkRequest): boolean {
  return (
    (request.minConfidence ?? null) !== null ||
    (request.countries ?? null) !== null ||
    (request.maxCompaniesPerTier ?? null) !== null
  );
}

function unprefixed(row: Props, prefix: string): Props {
  const out: Props = {};
  for (const [k, v] of Object.entries(row)) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
  return out;
}

/** What a per-tier cap ranks a company reached by: the strongest relationship into it. */
export interface Ranked {
  company: { vid: string };
  /** Confidence, none counted as 0. */
  confidence: number;
  /** The relationship's latest evidence as an ISO timestamp. */
  date: string;
}

interface Candidate extends Ranked {
  company: TierCompany;
}

/** Stronger first: confidence, then the latest evidence, then the vid so that ties always fall the same way. */
export function stronger(a: Ranked, b: Ranked): number {
  if (a.confidence !== b.confidence) return b.confidence - a.confidence;
  if (a.date !== b.date) return a.date < b.date ? 1 : -1;
  return a.company.vid < b.company.vid ? -1 : a.company.vid > b.company.vid ? 1 : 0;
}

/**
 * Breadth-first walk, one frontier step per tier, with the step query doing the
 * filtering (confidence, countries, evidence date) so that a filtered-out
 * relationship or company is never walked through. With a per-tier cap, a tier
 * keeps the companies reached through the strongest relationships, only those
 * are walked onward, and the sink hears how many were left out.
 */
export async function walkBySteps(
  root: TierCompany,
  request: TierWalkRequest,
  sink: TierWalkSink,
  step: StepReader,
  signal?: AbortSignal,
): Promise<void> {
  await sink.companies([root]);
  const byVid = new Map<string, TierCompany>([[root.vid, root]]);
  // A company the cap left out is not reached again farther away: its tier would not be its distance.
  const seen = new Set<string>([root.vid]);
  const tiers: string[][] = [[root.vid]];
  const cap = request.maxCompaniesPerTier ?? null;

  for (let tier = 0; tier < request.tiers; tier++) {
    signal?.throwIfAborted();
    const reached = new Map<string, Candidate>();
    await step(tiers[tier]!, (rows) => {
      for (const r of rows) {
        const vid = str(r.to_vid) ?? '';
        if (seen.has(vid)) continue;
        const candidate: Candidate = {
          company: reached.get(vid)?.company ?? toTierCompany(unprefixed(r, 'to_'), tier + 1),
          confidence: num(r.confidence_score) ?? 0,
          date: iso(r.latest_evidence_date) ?? '',
        };
        const known = reached.get(vid);
        if (!known || stronger(candidate, known) < 0) reached.set(vid, candidate);
      }
      return Promise.resolve();
    });
    for (const vid of reached.keys()) seen.add(vid);
    let next = [...reached.values()];
    if (cap !== null && next.length > cap) {
      next.sort(stronger);
      await sink.dropped?.(tier + 1, next.length - cap);
      next = next.slice(0, cap);
    }
    if (next.length === 0) break;
    const fresh = next.map((c) => c.company);
    for (const c of fresh) byVid.set(c.vid, c);
    await sink.companies(fresh);
    tiers.push(fresh.map((c) => c.vid));
  }

  for (let tier = 0; tier + 1 < tiers.length; tier++) {
    signal?.throwIfAborted();
    await step(tiers[tier]!, async (rows) => {
      const batch: TierRelationship[] = [];
      for (const r of rows) {
        const to = byVid.get(str(r.to_vid) ?? '');
        if (to?.tier !== tier + 1) continue;
        const from = byVid.get(str(r.from_vid) ?? '');
        if (!from) continue;
        batch.push(
          request.direction === 'suppliers'
            ? toTierRelationship(r, to, from)
            : toTierRelationship(r, from, to),
        );
      }
      if (batch.length > 0) await sink.relationships(tier, batch);
    });
  }
}
