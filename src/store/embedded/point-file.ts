import fs from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import type { Database, Statement } from 'better-sqlite3';
import type { Props } from '../mappers';

/**
 * Version of the file's layout, part of its key: a file of another layout is
 * not used, and the rows are read from the engine again.
 */
const LAYOUT = 1;

/** The two kinds of record a point read asks for by key. */
const TABLES = { companies: 'company', edges: 'edge' } as const;
type Kind = keyof typeof TABLES;

/** Engine values as JSON: INT64 may come as a bigint, which JSON has no form for. */
function engineJson(row: Props): string {
  return JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
}

/**
 * Company profiles and edges with their evidence, one engine row per key, in a
 * SQLite file written once per graph generation and kept beside it
 * (`<generation>.point-reads`). The engine spends about half a millisecond of
 * its own threads on every point query, however small; here a read is one
 * B-tree lookup on the calling thread, a few microseconds once the pages are
 * in the operating system's cache.
 *
 * The rows are stored as the engine returned them (dates become ISO text) and
 * go through the same mappers as the engine's, so both answer alike.
 */
export class PointFile {
  private readonly lookups: Record<Kind, Statement<[string], { row: string }>>;

  private constructor(
    private readonly db: Database,
    readonly counts: Record<Kind, number>,
  ) {
    this.lookups = {
      companies: db.prepare(`SELECT row FROM ${TABLES.companies} WHERE key = ?`),
      edges: db.prepare(`SELECT row FROM ${TABLES.edges} WHERE key = ?`),
    };
  }

  /**
   * Opens the file written for `key`. Null when there is none, or when it was
   * written for another key or layout; throws when it cannot be read.
   */
  static open(file: string, key: string): PointFile | null {
    if (!fs.existsSync(file)) return null;
    const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    try {
      const meta = new Map(
        db
          .prepare<[], { name: string; value: string }>('SELECT name, value FROM meta')
          .all()
          .map((r) => [r.name, r.value]),
      );
      if (meta.get('key') !== key || meta.get('layout') !== String(LAYOUT)) {
        db.close();
        return null;
      }
      return new PointFile(db, {
        companies: Number(meta.get('companies')),
        edges: Number(meta.get('edges')),
      });
    } catch (err) {
      db.close();
      throw err;
    }
  }

  /** The engine row of company/get-profile for `vid`, or null. */
  company(vid: string): Props | null {
    return this.read('companies', vid);
  }

  /** Whether the edges were written into the file (see EmbeddedStoreOptions.pointFileEdges). */
  get holdsEdges(): boolean {
    return this.counts.edges > 0;
  }

  /** The engine row of edge/get for `edgeId`, or null (also when the file holds no edges). */
  edge(edgeId: string): Props | null {
    return this.read('edges', edgeId);
  }

  private read(kind: Kind, key: string): Props | null {
    const found = this.lookups[kind].get(key);
    return found ? (JSON.parse(found.row) as Props) : null;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/**
 * Writes a point-read file: rows go into `<file>.tmp`, which becomes `file`
 * only when `finish` has written the key, so a reader never sees half a file
 * and a write cut short leaves nothing behind once `abort` has run.
 */
export class PointFileWriter {
  private readonly tmp: string;
  private readonly db: Database;
  private readonly inserts: Record<Kind, Statement<[string, string]>>;
  private readonly counts: Record<Kind, number> = { companies: 0, edges: 0 };

  constructor(private readonly file: string) {
    this.tmp = `${file}.tmp`;
    fs.rmSync(this.tmp, { force: true });
    this.db = new BetterSqlite3(this.tmp);
    // A file that is rebuilt from the engine when lost needs no journal. The tables keep rowids:
    // without them a row of more than a few hundred bytes (an edge's evidence) spills into
    // overflow pages of its own, which made the file four times the size at 1M companies.
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.exec(`
      CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE ${TABLES.companies} (key TEXT PRIMARY KEY, row TEXT NOT NULL);
      CREATE TABLE ${TABLES.edges} (key TEXT PRIMARY KEY, row TEXT NOT NULL);
      BEGIN;`);
    this.inserts = {
      companies: this.db.prepare(`INSERT INTO ${TABLES.companies} (key, row) VALUES (?, ?)`),
      edges: this.db.prepare(`INSERT INTO ${TABLES.edges} (key, row) VALUES (?, ?)`),
    };
  }

  /** Rows of company/profiles-range. */
  addCompanies(rows: readonly Props[]): void {
    this.add('companies', 'vid', rows);
  }

  /** Rows of edge/range. */
  addEdges(rows: readonly Props[]): void {
    this.add('edges', 'edge_id', rows);
  }

  private add(kind: Kind, keyColumn: string, rows: readonly Props[]): void {
    const insert = this.inserts[kind];
    for (const row of rows) {
      const key = row[keyColumn];
      if (typeof key !== 'string') continue;
      insert.run(key, engineJson(row));
      this.counts[kind]++;
    }
  }

  /** Rows written so far, by kind. */
  get written(): Readonly<Record<Kind, number>> {
    return this.counts;
  }

  /** Writes the key, closes the file and moves it into place. */
  finish(key: string): void {
    const meta = this.db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)');
    meta.run('key', key);
    meta.run('layout', String(LAYOUT));
    meta.run('companies', String(this.counts.companies));
    meta.run('edges', String(this.counts.edges));
    this.db.exec('COMMIT');
    this.db.close();
    fs.renameSync(this.tmp, this.file);
  }

  /** Closes and removes the unfinished file. */
  abort(): void {
    if (this.db.open) this.db.close();
    fs.rmSync(this.tmp, { force: true });
  }
}
