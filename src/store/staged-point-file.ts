/**
 * The point-read file (point-file.ts) of a staged import, written from its Company and Edge
 * staging files while the store loads them, so that it answers as one written from the loaded graph
 * does. The profiles are written as the stores write them, JSON.stringify of toProfile of each row
 * as the engine gives it back once loaded, but straight from each staged line's text
 * (stagedProfileJson: about 6 s of CPU at 1M companies, where decoding the row and mapping it took
 * 16 s on a core the load wanted). The Edge staging file itself is kept as the file's edges (under a
 * name of its own beside it, a second link to the staging file), found by the keys of its lines the
 * import noted as it wrote them (staged-keys.ts); a read decodes and maps its one row (mapping every
 * edge with its evidence took about 70 s of CPU at 1M; a read pays about 10 microseconds). Keeping
 * the Company lines so too saved the import another 16 s of CPU, but cost every profile read 10 to
 * 20 microseconds more in a server (about a tenth). A server opens the file at its first read of
 * the new data instead of reading every profile and edge back from the engine, which at 1M
 * companies took four to six minutes of a first start, beside the requests.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger';
import type { LoadAlongside } from './graph-store';
import { iso, jsonList, strings, texts, toIdentifier, byTypeThenValue } from './mappers';
import { fillPointFile } from './point-file';
import { LineEntries, keysFileOf, readStagedKeys } from './staged-keys';
import type { StagedKeys } from './staged-keys';
import {
  checkStagedHeader,
  readStagingBlocks,
  readStagingLines,
  stagedColumns,
  stagedHeader,
  stagedCounts,
} from './staging-file';
import { STAGING_DELIMITER, stagingFile } from './tables';
import type { TableName } from './tables';

/**
 * Writes the point-read file `file` under `key` from the staging directory: every company, and
 * with `edges` every edge with its evidence. Throws when the staging holds other counts than its
 * marker states, or `signal` aborts (nothing is left behind then).
 */
export async function writeStagedPointFile(
  stagingDir: string,
  file: string,
  key: string,
  edges: boolean,
  signal: AbortSignal,
): Promise<{ companies: number; edges: number }> {
  const counts = stagedCounts(stagingDir);
  const expected = { companies: counts.Company ?? 0, edges: edges ? (counts.Edge ?? 0) : 0 };
  await fillPointFile(file, key, expected, async (writer) => {
    const json = stagedProfileJson(stagedColumns('Company'));
    await readStagingLines(
      path.join(stagingDir, stagingFile('Company')),
      (text, line) => {
        const fields = text.split(STAGING_DELIMITER);
        if (line === 1) checkStagedHeader('Company', fields);
        else writer.addCompanyJson(fields[0]!, json(fields));
      },
      () => signal.throwIfAborted(),
    );
    if (edges) {
      const staged = path.join(stagingDir, stagingFile('Edge'));
      const keys = await stagedKeysOf(staged, 'Edge', signal);
      signal.throwIfAborted();
      writer.addStagingFile('edges', stagedColumns('Edge'), staged, keys);
    }
    return true;
  });
  return expected;
}

/**
 * The JSON of the profile of a staged Company line of `columns`, from its fields: the text of
 * JSON.stringify(toProfile(row)) for the row stagedRowDecoder makes of them (tests hold the two
 * equal), without making the row or the profile. Each value is mapped as asLoaded and toProfile map
 * it and written out; the addresses are the staged JSON as it is, which the staging writes in the
 * form toAddress gives (addressesField: its keys, in its order, each value a string or null).
 */
export function stagedProfileJson(columns: readonly string[]): (fields: readonly string[]) => string {
  const at = (name: string): number => {
    const i = columns.indexOf(name);
    if (i < 0) throw new Error(`the staged Company lines have no column ${name}`);
    return i;
  };
  const vid = at('vid');
  const cid = at('cid_id');
  const name = at('name');
  const legal = at('company_legal_name');
  const description = at('description');
  const domains = at('domains');
  const websites = at('websites');
  const supplierEvidence = at('count_supplier_evidence');
  const customerEvidence = at('count_customer_evidence');
  const customers = at('count_customers');
  const suppliers = at('count_suppliers');
  const identifiers = at('identifiers');
  const addresses = at('addresses');
  const domiciled = at('domiciled_country');
  const incorporated = at('incorporated_country');
  const incorporation = at('incorporation_date');
  const ipo = at('ipo_date');
  const active = at('is_active');
  const forwarder = at('is_freight_forwarder');
  const isPublic = at('is_public');
  const phone = at('hq_phone_number');
  const parent = at('is_cluster_parent');
  const aliases = at('aliases');
  const industry = at('industry');
  const system = at('industry_code_system');
  const code = at('industry_code');
  /** A STRING column: empty is null. */
  const text = (v: string) => (v === '' ? 'null' : JSON.stringify(v));
  /** An INT64 count: empty is 0. */
  const count = (v: string) => (v === '' ? '0' : JSON.stringify(Number(v)));
  /** A BOOLEAN column: empty is null. */
  const flag = (v: string) => (v === '' ? 'null' : v === 'true' ? 'true' : 'false');
  /** A TIMESTAMP column, in the form iso gives. */
  const date = (v: string) => (v === '' ? 'null' : JSON.stringify(iso(v)));
  return (f) => {
    const field = (i: number) => f[i] ?? '';
    const ids = field(identifiers);
    const places = field(addresses);
    return (
      `{"vid":${JSON.stringify(field(vid))},"cid_id":${JSON.stringify(field(cid))},` +
      `"name":${JSON.stringify(field(name))},"company_legal_name":${text(field(legal))},` +
      `"description":${text(field(description))},"domains":${JSON.stringify(strings(field(domains)))},` +
      `"websites":${JSON.stringify(strings(field(websites)))},` +
      `"count_supplier_evidence":${count(field(supplierEvidence))},` +
      `"count_customer_evidence":${count(field(customerEvidence))},` +
      `"count_customers":${count(field(customers))},"count_suppliers":${count(field(suppliers))},` +
      `"identifiers":${ids === '' || ids === '[]' ? '[]' : JSON.stringify(jsonList(ids).map(toIdentifier).sort(byTypeThenValue))},` +
      `"addresses":${places === '' ? '[]' : places},` +
      `"domiciled_country":${text(field(domiciled))},"incorporated_country":${text(field(incorporated))},` +
      `"incorporation_date":${date(field(incorporation))},"ipo_date":${date(field(ipo))},` +
      `"is_active":${flag(field(active))},"is_freight_forwarder":${flag(field(forwarder))},` +
      `"is_public":${flag(field(isPublic))},"hq_phone_number":${text(field(phone))},` +
      `"is_cluster_parent":${field(parent) === 'true'},"aliases":${JSON.stringify(texts(field(aliases)))},` +
      `"industry":${text(field(industry))},"industry_code_system":${text(field(system))},` +
      `"industry_code":${text(field(code))}}`
    );
  };
}

/**
 * The keys of the lines of `file`, a staging file of `table`, its header checked: those the import
 * saved beside it (the Edge lines'), or else found by reading its lines (the Company lines', about
 * a second at 1M companies, where writing each profile as JSON took 16 s).
 */
async function stagedKeysOf(file: string, table: TableName, signal: AbortSignal): Promise<StagedKeys> {
  const bytes = fs.statSync(file).size;
  const saved = readStagedKeys(keysFileOf(file), bytes);
  if (saved) {
    checkStagedHeader(table, stagedHeader(file));
    return saved;
  }
  const entries = new LineEntries();
  let at = 0;
  await readStagingBlocks(
    file,
    (text) => {
      checkStagedHeader(table, text.split(STAGING_DELIMITER));
      at = Buffer.byteLength(text) + 1;
    },
    (block, start, end) => {
      at = entries.addLines(block, start, end, at);
    },
    () => signal.throwIfAborted(),
  );
  if (at !== bytes) throw new Error(`staging file ${file} changed while its lines were read`);
  const { count, hashes, offsets, lengths } = entries;
  return { count, hashes, offsets, lengths, bytes };
}

/**
 * The point-read file written while the store loads an import (see writeStagedPointFile), as the
 * store names it (`name`) and keys it (`keyOf` the data's key).
 */
export function pointFileAlongside(
  name: string,
  keyOf: (dataKey: string) => string,
  edges: boolean,
  log?: Logger,
): LoadAlongside {
  return async (stagingDir, derivedFile, signal) => {
    const started = Date.now();
    const { file, key } = derivedFile(name);
    const counts = await writeStagedPointFile(stagingDir, file, keyOf(key), edges, signal);
    log?.info({ ...counts, ms: Date.now() - started, file }, 'point-read file of the import written');
  };
}
