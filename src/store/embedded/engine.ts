/**
 * The one module that names the embedded Cypher engine package. Kuzu 0.11.3's
 * maintained successor `lbug` has the same API but needs a newer glibc than
 * Debian 12 ships; moving to it is a change of this file only.
 */
import * as kuzu from 'kuzu';

export type EngineDatabase = kuzu.Database;
export type EngineConnection = kuzu.Connection;
export type EnginePreparedStatement = kuzu.PreparedStatement;
export type EngineQueryResult = kuzu.QueryResult;
export type EngineValue = kuzu.KuzuValue;

export interface EngineOptions {
  /** Buffer pool in bytes; 0 leaves the engine's default. */
  bufferPoolBytes: number;
  readOnly?: boolean;
  /**
   * Whether what this database writes is compressed (default true). Each column chunk records how
   * it is stored, so a database opened either way reads chunks written either way.
   */
  compression?: boolean;
}

/** Opens (or creates) a database file. */
export function openDatabase(file: string, options: EngineOptions): EngineDatabase {
  return new kuzu.Database(
    file,
    options.bufferPoolBytes,
    options.compression ?? true,
    options.readOnly ?? false,
  );
}

/** A connection that is not yet usable: callers must await `init()` first. */
export function newConnection(db: EngineDatabase, threads?: number): EngineConnection {
  return new kuzu.Connection(db, threads);
}
