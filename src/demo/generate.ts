/**
 * Deterministic generator of realistic datasets in the import format
 * (docs/import-format.md). The same company count and seed give byte-identical
 * files: all randomness comes from seeded Rng streams, never from the clock.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Worker } from 'node:worker_threads';
import { workerFileAvailable } from '../worker-file';
import { quotedField } from '../domain/csv-text';
import { ChunkWriter } from '../import/csv';
import { INPUT_FILES, INPUT_ORDER, isinCheckDigit, leiCheckDigits } from '../import/format';
import type { InputFileName } from '../import/format';
import {
  BRANDS,
  COUNTRIES,
  FAMILY_DE,
  FAMILY_EN,
  FAMILY_ES,
  FAMILY_FR,
  FAMILY_IT,
  PUBLISHERS,
  REGION_ES,
  REGION_FR,
  REGION_IT,
  REGION_ZH,
  SECTORS,
  SHORT_NAME_PARTS,
  STREETS,
} from './reference-names';
import type { Country, Sector } from './reference-names';
import {
  Rng,
  WeightedPicker,
  base32,
  base32x6,
  feistel,
  idKey,
  mix32,
  opaqueId,
  permute30,
  unitHash,
} from './random';
import type { ImportProgress } from '../import/stage-result';

export interface GenerateOptions {
  /** Number of companies; relationships and evidence scale with it (about 5 and 10 per company). */
  companies: number;
  seed: number;
  /** Directory for the CSV files; created when missing, files in it overwritten. */
  outDir: string;
  onProgress?: (p: ImportProgress) => void;
  /**
   * Write relationships and evidence in worker threads. Default: when there are
   * 50,000 companies or more and the compiled worker script is present. The
   * files are the same either way.
   */
  parallel?: boolean;
}

export interface GenerateResult {
  /** Paths of the files written. */
  files: string[];
  /** Data rows written per file, keyed by file kind (companies, relationships, ...). */
  counts: Record<string, number>;
}

/** Companies the id scheme can number: edge ids pack the supplier number into 25 bits. */
export const MAX_GENERATED_COMPANIES = 1 << 25;

const DAY = 86400000;
const EVIDENCE_FIRST_DAY = Date.UTC(2015, 0, 1) / DAY;
const EVIDENCE_LAST_DAY = Date.UTC(2026, 9, 31) / DAY;
const PROGRESS_EVERY = 50000;
/** Share of companies that belong to a cluster of two or more. */
const CLUSTERED_SHARE = 0.1;
/** Mean out-degree target; the degree law below has this mean. */
const LOMAX_SHAPE = 1.7;
const LOMAX_SCALE = 3.9;
/** Tail index of customer attractiveness: lower means bigger hubs. */
const CUSTOMER_PARETO = 1.5;

/** `YYYY-MM-DD` by day number; filled ahead so that the array stays dense. */
const dayCache: string[] = new Array<string>(80000).fill('');

/** `YYYY-MM-DD` of a day number (days since 1970-01-01). */
function dayText(day: number): string {
  const hit = dayCache[day];
  if (hit !== undefined && hit !== '') return hit;
  const t = new Date(day * DAY).toISOString().slice(0, 10);
  if (day >= 0 && day < 80000) dayCache[day] = t;
  return t;
}

const slugCache = new Map<string, string>();

/** ASCII slug of a name for domains: `Société Lyonnaise` -> `societe-lyonnaise`. */
function slug(text: string): string {
  let s = slugCache.get(text);
  if (s !== undefined) return s;
  s = text
    .replace(/ß/g, 'ss')
    .replace(/[øØ]/g, 'o')
    .replace(/[æÆ]/g, 'ae')
    .replace(/[łŁ]/g, 'l')
    .replace(/ı/g, 'i')
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  if (s.length === 0) s = 'co';
  if (s.length > 40) s = s.slice(0, 40).replace(/-+$/, '');
  slugCache.set(text, s);
  return s;
}

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

function randomChars(rng: Rng, alphabet: string, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet.charAt(rng.int(alphabet.length));
  return out;
}

function digits(rng: Rng, n: number): string {
  let out = String(1 + rng.int(9));
  for (let i = 1; i < n; i++) out += String(rng.int(10));
  return out;
}

function postalCode(rng: Rng, pattern: string): string {
  let out = '';
  for (const ch of pattern) {
    if (ch === '#') out += String(rng.int(10));
    else if (ch === 'A') out += UPPER.charAt(rng.int(26));
    else out += ch;
  }
  return out;
}

const LEI_LOUS = [
  '5299',
  '5493',
  '2138',
  '8945',
  '9845',
  '3912',
  '7245',
  '0292',
  '2549',
  '3157',
  '9695',
  '8156',
];

interface CompanyName {
  /** Name without legal form, used for Wikipedia titles. */
  base: string;
  legal: string;
  /** Word the domain is built from. */
  domainWord: string;
}

/** Picks two different entries of a list of at least two. */
function twoOf(rng: Rng, list: readonly string[]): [string, string] {
  const a = rng.int(list.length);
  let b = rng.int(list.length - 1);
  if (b >= a) b++;
  return [list[a] as string, list[b] as string];
}

function makeName(
  rng: Rng,
  country: Country,
  sector: Sector,
  brand: string,
  subsidiaryCity: string | null,
): CompanyName {
  const suffix = rng.pick(country.suffixes);
  const style = country.style;
  const roll = rng.next();
  let base: string;
  let domainWord = brand;
  if (subsidiaryCity === null && roll < 0.03) {
    const letters = randomChars(rng, rng.chance(0.15) ? `${UPPER}23456789` : UPPER, rng.chance(0.6) ? 3 : 2);
    base = rng.chance(0.5) ? letters : `${letters} ${rng.pick(SHORT_NAME_PARTS)}`;
    domainWord = letters;
  } else if (subsidiaryCity === null && roll < 0.1) {
    switch (style) {
      case 'de': {
        const fam = rng.pick(FAMILY_DE);
        base = `${fam} & ${rng.chance(0.5) ? 'Söhne' : 'Co.'}`;
        domainWord = fam;
        break;
      }
      case 'fr': {
        const fam = rng.pick(FAMILY_FR);
        base = `${rng.chance(0.5) ? 'Établissements' : 'Maison'} ${fam} Frères`;
        domainWord = fam;
        break;
      }
      case 'es': {
        const fam = rng.pick(FAMILY_ES);
        base = `Hermanos ${fam}`;
        domainWord = fam;
        break;
      }
      case 'it': {
        const fam = rng.pick(FAMILY_IT);
        base = `${fam} & Figli`;
        domainWord = fam;
        break;
      }
      default: {
        const fam = rng.pick(FAMILY_EN);
        base = `${fam} & Sons`;
        domainWord = fam;
      }
    }
  } else if (roll < 0.35 && subsidiaryCity === null && style !== 'en' && style !== 'generic') {
    switch (style) {
      case 'de':
      case 'nordic':
      case 'nl':
        base = `${brand} ${sector.de}`;
        break;
      case 'fr':
        base = `${rng.pick(['Société', 'Compagnie', 'Manufacture'])} ${rng.pick(REGION_FR)} de ${sector.fr}`;
        domainWord = base.split(' ')[1] as string;
        break;
      case 'es':
        base = `${sector.es} ${rng.pick(REGION_ES)}`;
        domainWord = sector.es;
        break;
      case 'it':
        base = `${sector.it} ${rng.pick(REGION_IT)}`;
        domainWord = sector.it;
        break;
      case 'zh':
        base = `${rng.pick(REGION_ZH)} ${brand} ${sector.en}`;
        break;
      default:
        base = `${brand} ${sector.en}`;
    }
  } else {
    base = `${brand} ${sector.en}`;
  }
  if (subsidiaryCity !== null) base = `${brand} ${sector.en} (${subsidiaryCity})`;
  return { base, legal: `${base} ${suffix}`, domainWord };
}

function streetLine(rng: Rng, country: Country): string {
  const street = rng.pick(STREETS[country.style]);
  const n = 1 + rng.int(rng.chance(0.8) ? 120 : 2000);
  switch (country.style) {
    case 'en':
    case 'fr':
    case 'ko':
      return `${n} ${street}`;
    case 'zh':
      return `No. ${n} ${street}`;
    case 'ja':
      return `${1 + rng.int(5)}-${1 + rng.int(30)}-${1 + rng.int(20)} ${street}`;
    case 'generic':
      return `${street}, Lot ${n}`;
    default:
      return `${street} ${n}`;
  }
}

/** Evidence items per edge: 1 to 5, mean about 2. */
const EVIDENCE_COUNT = new WeightedPicker([1, 2, 3, 4, 5], [0.45, 0.25, 0.15, 0.1, 0.05]);
const EVIDENCE_TYPE = new WeightedPicker(['text', 'customs', 'filing'], [0.9, 0.07, 0.03]);
const METADATA = [
  '{"lang":"en","section":"business"}',
  '{"lang":"de","pages":3}',
  '{"source":"annual report","page":42}',
  '{"lang":"zh","translated":true}',
];
const COUNTRY_PICKER = new WeightedPicker(
  COUNTRIES,
  COUNTRIES.map((c) => c.weight),
);
const SECTOR_PICKER = new WeightedPicker(
  SECTORS,
  SECTORS.map((s) => s.weight),
);

/** Suppliers per random stream: edges of a block do not depend on how blocks are spread over workers. */
const BLOCK = 1024;
/** Edge ids number (supplier, ordinal) pairs; ordinals stay below 2^15. */
const ORDINAL_SPACE = 1 << 15;
/** Most customers one supplier gets. */
const MAX_DEGREE = 20000;

function header(name: InputFileName): string {
  return `${INPUT_FILES[name].columns.map((c) => c.name).join(',')}\n`;
}

/** Facts about every company that both the company and the relationship writers need. */
interface Plan {
  n: number;
  seed: number;
  vids: string[];
  /** Company number of the cluster parent, -1 when not in a cluster. */
  parentOf: Int32Array;
  sectorOf: Uint8Array;
}

function makePlan(n: number, seed: number): Plan {
  const companyKey = idKey(seed, 1);
  const vids: string[] = new Array<string>(n);
  for (let i = 0; i < n; i++) vids[i] = opaqueId('c', i, companyKey);
  // Clusters: contiguous blocks of companies (vids hide the order), the first one the parent.
  const plan = new Rng(seed, 1);
  const parentOf = new Int32Array(n).fill(-1);
  const meanClusterSize = 6;
  const startChance = CLUSTERED_SHARE / (meanClusterSize * (1 - CLUSTERED_SHARE) + CLUSTERED_SHARE);
  for (let i = 0; i < n;) {
    if (n - i >= 2 && plan.chance(startChance)) {
      const size = Math.min(n - i, 2 + Math.floor(19 * plan.next() ** 3));
      for (let k = 0; k < size; k++) parentOf[i + k] = i;
      i += size;
    } else {
      i++;
    }
  }
  // Sectors come from stateless hashes so that relationship writers agree without the company stream.
  const sectorKey = idKey(seed, 7);
  const inheritKey = idKey(seed, 8);
  const sectorOf = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const p = parentOf[i] as number;
    sectorOf[i] =
      p >= 0 && p !== i && unitHash(inheritKey, i) < 0.7
        ? (sectorOf[p] as number)
        : SECTOR_PICKER.index(unitHash(sectorKey, i));
  }
  return { n, seed, vids, parentOf, sectorOf };
}

type Progress = (file: string, rows: number) => void;

/** Writes companies.csv, clusters.csv, identifiers.csv and addresses.csv. */
/**
 * Aliases and industry of company `i`, drawn from hashes of its index rather than from the
 * companies' random stream, so that every other generated value is as it was before they existed.
 * About four in five listed companies get a ticker, and one company in twelve a former name; the
 * industry is the sector's name for most companies (as free text: the sectors carry no codes).
 */
function companyExtras(
  key: number,
  i: number,
  base: string,
  sector: Sector,
  isPublic: boolean,
): { aliases: string[]; industry: string } {
  const u = (k: number) => unitHash(key, i * 4 + k);
  const aliases: string[] = [];
  const first =
    base
      .split(/\s+/)
      .find((w) => /^[A-Za-z]/.test(w))
      ?.replace(/[^A-Za-z]/g, '') ?? '';
  if (isPublic && first.length >= 3 && u(0) < 0.8)
    aliases.push(first.slice(0, u(0) < 0.4 ? 3 : 4).toUpperCase());
  if (first !== '' && u(2) < 0.08) {
    const other = SECTORS[Math.floor(u(3) * SECTORS.length)]!;
    const former = `${first} ${other.en}`;
    if (other !== sector && former !== base) aliases.push(former);
  }
  return { aliases, industry: u(1) < 0.85 ? sector.en : '' };
}

async function writeCompanies(
  plan: Plan,
  outDir: string,
  progress: Progress,
): Promise<Record<string, number>> {
  const { n, seed, vids, parentOf, sectorOf } = plan;
  const kinds: InputFileName[] = ['companies', 'clusters', 'identifiers', 'addresses'];
  const writers = await Promise.all(kinds.map((k) => ChunkWriter.create(join(outDir, INPUT_FILES[k].file))));
  const [wCompanies, wClusters, wIdentifiers, wAddresses] = writers as [
    ChunkWriter,
    ChunkWriter,
    ChunkWriter,
    ChunkWriter,
  ];
  kinds.forEach((k, i) => (writers[i] as ChunkWriter).write(header(k)));
  let clusterRows = 0;
  let identifierRows = 0;
  let addressRows = 0;
  try {
    const rng = new Rng(seed, 2);
    const extrasKey = idKey(seed, 11);
    const clusterKey = idKey(seed, 4);
    const permKey = idKey(seed, 5);
    const qidKey = idKey(seed, 6);
    let parentBrand = '';
    let parentCountry: Country = COUNTRIES[0] as Country;
    let parentWiki = '';
    let parentDomain = '';
    for (let i = 0; i < n; i++) {
      const vid = vids[i] as string;
      const p = parentOf[i] as number;
      const isParent = p === i;
      const isSub = p >= 0 && !isParent;
      const sector = SECTORS[sectorOf[i] as number] as Sector;
      const country = isSub && rng.chance(0.5) ? parentCountry : COUNTRY_PICKER.pick(rng);
      const brand = isSub ? parentBrand : rng.pick(BRANDS);
      const hq = rng.pick(country.cities);
      const nm = makeName(rng, country, sector, brand, isSub && rng.chance(0.5) ? hq.city : null);
      if (isParent) {
        parentBrand = brand;
        parentCountry = country;
        parentWiki = '';
      }
      const name = rng.chance(0.85) ? nm.legal : nm.base;
      const legal = rng.chance(0.92) ? nm.legal : '';
      const big = isParent || rng.chance(0.05);
      const isPublic = big ? rng.chance(0.4) : rng.chance(0.06);
      let domains = '';
      let websites = '';
      if (rng.chance(0.85)) {
        const word = slug(nm.domainWord);
        const host =
          isSub && parentDomain !== '' && rng.chance(0.5)
            ? `${slug(country.code)}.${parentDomain}`
            : `${word}${rng.chance(0.5) ? `-${slug(sector.en.split(' ')[0] as string)}` : ''}.${country.tld}`;
        domains = host;
        if (isParent) parentDomain = host;
        if (rng.chance(0.1)) domains += `|${word}-group.com`;
        if (rng.chance(0.8)) websites = `https://www.${host}${rng.chance(0.2) ? '/en/' : ''}`;
      } else if (isParent) {
        parentDomain = '';
      }
      let description = '';
      if (rng.chance(0.9)) {
        const [a, b] = twoOf(rng, sector.for);
        description = `${nm.legal} ${sector.does}. Main markets: ${a}, ${b}. Headquartered in ${hq.city}, ${country.name}.`;
        if (isSub) description += ' Part of a larger group.';
      }
      const incorporated = rng.chance(0.7) ? country : isSub ? parentCountry : COUNTRY_PICKER.pick(rng);
      let incDate = '';
      let incYear = 2000;
      if (rng.chance(0.92)) {
        incYear = 2024 - Math.floor(174 * rng.next() ** 2.2);
        incDate = dayText(Math.floor(Date.UTC(incYear, 0, 1) / DAY) + rng.int(365));
      }
      let ipo = '';
      if (isPublic && rng.chance(0.8)) {
        const from = Math.max(incYear + 1, 1970);
        const year = from >= 2025 ? 2025 : rng.range(from, 2025);
        ipo = dayText(Math.floor(Date.UTC(year, 0, 1) / DAY) + rng.int(365));
      }
      const active = rng.chance(0.94) ? 'true' : rng.chance(0.85) ? 'false' : '';
      const ff =
        sector.logistics === true
          ? rng.chance(0.8)
            ? 'true'
            : 'false'
          : rng.chance(0.005)
            ? 'true'
            : 'false';
      const phone = rng.chance(0.7)
        ? `${country.phone} ${digits(rng, 2 + rng.int(2))} ${digits(rng, 7)}`
        : '';
      const extras = companyExtras(extrasKey, i, nm.base, sector, isPublic);
      wCompanies.write(
        `${vid},${quotedField(name)},${quotedField(legal)},${quotedField(description)},${domains},${websites},${quotedField(country.name)},${quotedField(incorporated.name)},${incDate},${ipo},${active},${isPublic ? 'true' : 'false'},${ff},${phone},${quotedField(extras.aliases.join('|'))},${quotedField(extras.industry)},,\n`,
      );

      if (p >= 0) {
        wClusters.write(`${opaqueId('k', p, clusterKey)},${vid},${isParent ? 'true' : 'false'}\n`);
        clusterRows++;
      }

      if (rng.chance(big ? 0.9 : 0.45)) {
        const prefix = `${rng.pick(LEI_LOUS)}00${randomChars(rng, ALNUM, 12)}`;
        wIdentifiers.write(`${vid},LEI,${prefix}${leiCheckDigits(prefix)}\n`);
        identifierRows++;
      }
      if (rng.chance(0.65)) {
        wIdentifiers.write(`${vid},PermID,${4295000000 + permute30(i, permKey)}\n`);
        identifierRows++;
      }
      if (rng.chance(big ? 0.6 : 0.25)) {
        wIdentifiers.write(`${vid},Wikidata,Q${1000000 + permute30(i, qidKey)}\n`);
        identifierRows++;
      }
      if (isPublic && rng.chance(0.9)) {
        const prefix = `${country.code}${randomChars(rng, ALNUM, 9)}`;
        wIdentifiers.write(`${vid},ISIN,${prefix}${isinCheckDigit(prefix)}\n`);
        identifierRows++;
      }
      let wiki = '';
      if (isParent && rng.chance(0.5)) {
        parentWiki = nm.base;
        wiki = parentWiki;
      } else if (isSub && parentWiki !== '' && rng.chance(0.5)) {
        // Subsidiaries often point at the group's article: a shared identifier.
        wiki = parentWiki;
      } else if (!isSub && !isParent && big && rng.chance(0.5)) {
        wiki = nm.base;
      }
      if (wiki !== '') {
        wIdentifiers.write(`${vid},Wikipedia,${quotedField(wiki)}\n`);
        identifierRows++;
      }

      if (rng.chance(0.95)) {
        wAddresses.write(
          `${vid},${quotedField(streetLine(rng, country))},${quotedField(hq.city)},${quotedField(hq.region)},${postalCode(rng, country.postal)},${quotedField(country.name)},headquarters\n`,
        );
        addressRows++;
      }
      if (rng.chance(0.15)) {
        const site = rng.pick(country.cities);
        wAddresses.write(
          `${vid},${quotedField(streetLine(rng, country))},${quotedField(site.city)},${quotedField(site.region)},${postalCode(rng, country.postal)},${quotedField(country.name)},${rng.pick(['plant', 'warehouse', 'registered'])}\n`,
        );
        addressRows++;
      }

      if ((i & 255) === 0) {
        for (const w of writers) if (w.full) await w.flush();
        if (i % PROGRESS_EVERY === 0) progress('companies.csv', i);
      }
    }
    for (const w of writers) await w.close();
  } catch (e) {
    for (const w of writers) await w.abandon().catch(() => undefined);
    throw e;
  }
  progress('companies.csv', n);
  return { companies: n, clusters: clusterRows, identifiers: identifierRows, addresses: addressRows };
}

/** Customer attractiveness: Pareto weights, so that a few companies collect thousands of suppliers. */
function customerPicker(plan: Plan): WeightedPicker<number> {
  const er = new Rng(plan.seed, 3);
  const attract = new Float64Array(plan.n);
  let total = 0;
  for (let i = 0; i < plan.n; i++) {
    const w = (1 - er.next()) ** (-1 / CUSTOMER_PARETO);
    attract[i] = w;
    total += w;
  }
  const cap = total * 0.02;
  return new WeightedPicker<number>(
    [],
    attract.map((w) => Math.min(w, cap)),
  );
}

/**
 * Writes the relationships and evidence of suppliers [from, to) (from a
 * multiple of BLOCK). Heavy-tailed out-degrees (Lomax) and customer choice by
 * attractiveness give hubs, cycles and diamonds.
 */
async function writeEdges(
  plan: Plan,
  from: number,
  to: number,
  relPath: string,
  evPath: string,
  withHeader: boolean,
  progress: Progress,
): Promise<Record<string, number>> {
  const { n, seed, vids, parentOf, sectorOf } = plan;
  const customers = customerPicker(plan);
  const wEdges = await ChunkWriter.create(relPath);
  const wEvidence = await ChunkWriter.create(evPath);
  if (withHeader) {
    wEdges.write(header('relationships'));
    wEvidence.write(header('evidence'));
  }
  const maxDegree = Math.max(1, Math.min(MAX_DEGREE, Math.floor(n / 2)));
  const edgeKey = idKey(seed, 2);
  const evidenceKey = idKey(seed, 3);
  const slugKey = idKey(seed, 9) & 0xfffff;
  let edges = 0;
  let evidence = 0;
  const chosen: number[] = [];
  const chosenSet = new Set<number>();
  const evRows: string[] = [];
  let er = new Rng(seed, 1000);
  try {
    for (let s = from; s < to; s++) {
      if (s % BLOCK === 0 || s === from) er = new Rng(seed, 1000 + Math.floor(s / BLOCK));
      const p = parentOf[s] as number;
      let degree = Math.floor(LOMAX_SCALE * ((1 - er.next()) ** (-1 / LOMAX_SHAPE) - 1));
      if (degree > maxDegree) degree = maxDegree;
      chosen.length = 0;
      chosenSet.clear();
      const useSet = degree > 32;
      if (p >= 0 && p !== s && er.chance(0.5)) {
        // Subsidiaries often supply their own parent: an edge inside a cluster.
        chosen.push(p);
        if (useSet) chosenSet.add(p);
      }
      let attempts = degree * 3 + 10;
      while (chosen.length < degree && attempts-- > 0) {
        const c = customers.index(er.next());
        if (c === s) continue;
        if (useSet ? chosenSet.has(c) : chosen.includes(c)) continue;
        chosen.push(c);
        if (useSet) chosenSet.add(c);
      }
      const sector = SECTORS[sectorOf[s] as number] as Sector;
      const supplierVid = vids[s] as string;
      for (let o = 0; o < chosen.length; o++) {
        const c = chosen[o] as number;
        const edgeIndex = s * ORDINAL_SPACE + o;
        const edgeId = `e${base32(feistel(edgeIndex, 20, edgeKey), 8)}`;
        const k = EVIDENCE_COUNT.pick(er);
        const firstDay = EVIDENCE_FIRST_DAY + er.int(EVIDENCE_LAST_DAY - EVIDENCE_FIRST_DAY + 1);
        let lastMod = 0;
        evRows.length = 0;
        for (let j = 0; j < k; j++) {
          const evCode = feistel(edgeIndex * 8 + j, 22, evidenceKey);
          const evId = `v${base32(evCode, 9)}`;
          const day = firstDay + er.int(EVIDENCE_LAST_DAY - firstDay + 1);
          const dateText = er.chance(0.01)
            ? `${dayText(day)}T${String(6 + er.int(12)).padStart(2, '0')}:${String(er.int(60)).padStart(2, '0')}:00+0${er.int(9)}:00`
            : dayText(day);
          const type = EVIDENCE_TYPE.pick(er);
          const slugId = base32x6(mix32(evCode ^ slugKey) & 0x3fffffff);
          let pub: string;
          let url: string;
          if (type === 'customs') {
            pub = 'customsdata.example.net';
            url = `https://${pub}/bol/${slugId}`;
          } else if (type === 'filing') {
            pub = 'filings.example.com';
            url = `https://${pub}/doc/${slugId}`;
          } else {
            pub = PUBLISHERS[er.int(PUBLISHERS.length - 3)] as string;
            const d = dayText(day);
            url = `https://${pub}/${d.slice(0, 4)}/${d.slice(5, 7)}/${slugId}`;
          }
          const status = er.chance(0.9) ? '1' : er.chance(0.8) ? '2' : '3';
          const r = er.next();
          const byCustomer = r < 0.9 ? '' : r < 0.95 ? 'true' : 'false';
          const meta = er.chance(0.04) ? quotedField(METADATA[er.int(METADATA.length)] as string) : '';
          const created = day + er.int(8);
          const fin = er.chance(0.25) ? dayText(created + er.int(21)) : '';
          const mod = created + er.int(31);
          if (mod > lastMod) lastMod = mod;
          evRows.push(
            `${evId},${edgeId},${dateText},${type},${url},${pub},${status},${byCustomer},${meta},${fin},${dayText(created)},${dayText(mod)}\n`,
          );
        }
        evidence += k;
        const u = er.next();
        const conf = u > 0.97 ? 1 : Math.round((0.05 + 0.95 * u ** 0.6) * 1000) / 1000;
        const status = er.chance(0.85) ? '1' : er.chance(0.65) ? '2' : '3';
        let hs = '';
        if (sector.hs.length > 0 && er.chance(0.3)) {
          const h = er.pick(sector.hs);
          hs = er.chance(0.5) ? h : `${h}${String(10 + er.int(80))}`;
          if (er.chance(0.3)) {
            const h2 = er.pick(sector.hs);
            if (h2 !== h) hs += `|${h2}`;
          }
        }
        wEdges.write(
          `${edgeId},${supplierVid},${vids[c] as string},${String(conf)},supply,${status},,,${dayText(lastMod)},${hs}\n`,
        );
        wEvidence.write(evRows.join(''));
      }
      edges += chosen.length;
      if ((s & 63) === 0) {
        if (wEdges.full) await wEdges.flush();
        if (wEvidence.full) await wEvidence.flush();
        if (s % PROGRESS_EVERY === 0) progress('relationships.csv', edges);
      }
    }
    await wEdges.close();
    await wEvidence.close();
  } catch (e) {
    await wEdges.abandon().catch(() => undefined);
    await wEvidence.abandon().catch(() => undefined);
    throw e;
  }
  progress('relationships.csv', edges);
  return { relationships: edges, evidence };
}

/** One unit of generation work, run in this thread or in a worker. */
export type GenerateTask =
  | { kind: 'companies'; n: number; seed: number; outDir: string }
  | {
      kind: 'edges';
      n: number;
      seed: number;
      from: number;
      to: number;
      relPath: string;
      evPath: string;
      withHeader: boolean;
    };

/** Runs one task; `progress` gets running row counts. Used by the worker entry point too. */
export async function runGenerateTask(
  task: GenerateTask,
  progress: Progress,
): Promise<Record<string, number>> {
  const plan = makePlan(task.n, task.seed);
  if (task.kind === 'companies') return writeCompanies(plan, task.outDir, progress);
  return writeEdges(plan, task.from, task.to, task.relPath, task.evPath, task.withHeader, progress);
}

/** Smallest dataset worth spreading over worker threads. */
const PARALLEL_FROM = 50000;
const WORKER_FILE = join(__dirname, 'generate-worker.js');

function runInWorker(
  task: GenerateTask,
  progress: Progress,
  live: Worker[],
): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    const w = new Worker(WORKER_FILE, { workerData: task });
    live.push(w);
    let result: Record<string, number> | null = null;
    w.on('message', (m: WorkerMessage) => {
      if (m.type === 'progress') progress(m.file, m.rows);
      else result = m.counts;
    });
    w.on('error', reject);
    w.on('exit', (code) => {
      if (result !== null) resolve(result);
      else reject(new Error(`generator worker stopped with exit code ${code}`));
    });
  });
}

/** Messages from a generator worker. */
export type WorkerMessage =
  { type: 'progress'; file: string; rows: number } | { type: 'done'; counts: Record<string, number> };

async function appendFile(target: string, part: string): Promise<void> {
  await pipeline(
    createReadStream(part, { highWaterMark: 1 << 22 }),
    createWriteStream(target, { flags: 'a' }),
  );
  await rm(part, { force: true });
}

/**
 * Writes a dataset of `companies` companies into outDir: companies.csv,
 * clusters.csv, identifiers.csv, addresses.csv, relationships.csv and
 * evidence.csv. Same companies and seed, same bytes, however the work is
 * spread: large datasets are written by worker threads in parallel.
 */
export async function generateDataset(opts: GenerateOptions): Promise<GenerateResult> {
  const n = opts.companies;
  if (!Number.isInteger(n) || n < 2 || n > MAX_GENERATED_COMPANIES) {
    throw new RangeError(`companies must be an integer from 2 to ${MAX_GENERATED_COMPANIES}`);
  }
  const seed = opts.seed >>> 0;
  const outDir = opts.outDir;
  await mkdir(outDir, { recursive: true });
  const files = INPUT_ORDER.map((k) => join(outDir, INPUT_FILES[k].file));
  const relPath = join(outDir, INPUT_FILES.relationships.file);
  const evPath = join(outDir, INPUT_FILES.evidence.file);

  const rowsByTask = new Map<string, number>();
  let lastReport = 0;
  const report =
    (task: string): Progress =>
    (file, rows) => {
      rowsByTask.set(task, rows);
      let total = 0;
      for (const [k, v] of rowsByTask) if (k.startsWith(file === 'companies.csv' ? 'c' : 'e')) total += v;
      if (total - lastReport >= PROGRESS_EVERY || total < lastReport || file === 'companies.csv') {
        lastReport = total;
        opts.onProgress?.({ phase: 'generate', file, rows: total });
      }
    };

  const companiesTask: GenerateTask = { kind: 'companies', n, seed, outDir };
  const counts: Record<string, number> = {};
  const parallel = (opts.parallel ?? n >= PARALLEL_FROM) && workerFileAvailable(WORKER_FILE);
  if (!parallel) {
    Object.assign(counts, await runGenerateTask(companiesTask, report('c')));
    Object.assign(
      counts,
      await runGenerateTask(
        { kind: 'edges', n, seed, from: 0, to: n, relPath, evPath, withHeader: true },
        report('e'),
      ),
    );
  } else {
    const split = Math.round(n / 2 / BLOCK) * BLOCK;
    const relPart = `${relPath}.part`;
    const evPart = `${evPath}.part`;
    const live: Worker[] = [];
    let results: Record<string, number>[];
    try {
      results = await Promise.all([
        runInWorker(companiesTask, report('c'), live),
        runInWorker(
          { kind: 'edges', n, seed, from: 0, to: split, relPath, evPath, withHeader: true },
          report('e1'),
          live,
        ),
        runInWorker(
          { kind: 'edges', n, seed, from: split, to: n, relPath: relPart, evPath: evPart, withHeader: false },
          report('e2'),
          live,
        ),
      ]);
    } catch (e) {
      await Promise.all(live.map((w) => w.terminate()));
      await Promise.all([rm(relPart, { force: true }), rm(evPart, { force: true })]);
      throw e;
    }
    const [c, e1, e2] = results as [Record<string, number>, Record<string, number>, Record<string, number>];
    await appendFile(relPath, relPart);
    await appendFile(evPath, evPart);
    Object.assign(counts, c);
    counts.relationships = (e1.relationships ?? 0) + (e2.relationships ?? 0);
    counts.evidence = (e1.evidence ?? 0) + (e2.evidence ?? 0);
  }
  opts.onProgress?.({ phase: 'generate', file: 'relationships.csv', rows: counts.relationships ?? 0 });
  return { files, counts };
}
