/**
 * A worker thread that builds the search index from what the main thread hands it (see
 * build-thread.ts): a store's rows, or an import's staged Company lines and then their counts. It
 * hands the index back in shared memory, or saves it from here: at once when told where with the
 * end of the rows, or, for an import, once told where (the index is the size of its file: a copy
 * for the main thread, beside the thread's own until the thread ends, was that much memory more,
 * and a second or two of CPU). The main thread then ends it.
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import {
  decodeStagedCompanyLines,
  decodeStagedNames,
  stagedSearchRowDecoder,
} from '../store/staged-search-rows';
import { CompanySearchIndex, SearchIndexBuilder } from './company-search';
import type { BuildThreadData, BuildThreadReply, BuildThreadRequest } from './build-thread';
import { mayRaisePriority, setThreadPriority } from './thread-priority';

const port = parentPort!;
const data = workerData as BuildThreadData | undefined;
const reply = (m: BuildThreadReply) => port.postMessage(m);
const builder = new SearchIndexBuilder();
let decode: ReturnType<typeof stagedSearchRowDecoder> | null = null;
let failed = false;
/** The thread's priority before yieldToStaging lowered it; null when it is not lowered. */
let niceBefore: number | null = null;

/**
 * Lines come while the import stages its files on the main thread and the evidence thread, which
 * the import waits for: this thread takes only the time they leave (the lowest priority), until the
 * counts come and the index is all that is left to finish. A nice value is a thread's own on Linux
 * (elsewhere it would be the whole process's, so it is left alone there).
 */
function yieldToStaging(): boolean {
  // Lowered only where it can be raised again: the rest of the build, beside the store's load,
  // would otherwise stay low too.
  niceBefore = null;
  if (!mayRaisePriority()) return false;
  const before = os.getPriority(0);
  if (!setThreadPriority(os.constants.priority.PRIORITY_LOW)) return false;
  niceBefore = before;
  return true;
}

/** Back to the priority the thread had before yieldToStaging. */
function restorePriority(): void {
  if (niceBefore === null) return;
  // Checked beforehand; should it fail all the same, the build goes on at the lowest priority.
  setThreadPriority(niceBefore);
  niceBefore = null;
}

/**
 * Set to 1 with the counts: the typo thread of the word index, begun before them (and so started at
 * this thread's lowest priority), then takes its priority back too (see TypoPriority).
 */
const typoRaise = new Int32Array(new SharedArrayBuffer(4));

/** An import's index (`end` with `keep`), finished or not yet, until the main thread says where to save it. */
let kept: Promise<CompanySearchIndex> | null = null;

/** The text of UTF-8 bytes the main thread moved here. */
const textOf = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

const errorText = (err: unknown) => (err instanceof Error ? (err.stack ?? err.message) : String(err));

const fail = (err: unknown) => {
  failed = true;
  reply({ type: 'failed', error: errorText(err) });
};

// Fed by an import: the thread gives way to the staging from the start, and says whether it could.
if (data) reply({ type: 'started', lowered: yieldToStaging() });

port.on('message', (m: BuildThreadRequest) => {
  if (failed) return;
  try {
    switch (m.type) {
      case 'rows':
        builder.add(m.rows);
        reply({ type: 'taken', rows: m.rows.length });
        break;
      case 'names':
        builder.addNames(decodeStagedNames(textOf(m.text)));
        break;
      case 'lines': {
        if (data && Atomics.load(data.readAll, 0) === 1) restorePriority();
        decode ??= stagedSearchRowDecoder();
        const rows = decodeStagedCompanyLines(textOf(m.text), decode);
        builder.addUncounted(rows);
        reply({ type: 'taken', rows: rows.length });
        break;
      }
      case 'all-lines':
        builder.prepare(niceBefore === null ? undefined : { raiseWhen: typoRaise, to: niceBefore });
        break;
      case 'counts':
        builder.setCounts(m.counts);
        Atomics.store(typoRaise, 0, 1);
        restorePriority();
        break;
      case 'end':
        if (m.keep === true) {
          kept = CompanySearchIndex.finish(builder);
          kept.catch(fail);
        } else if (m.saveTo) {
          const { file, key, sync } = m.saveTo;
          CompanySearchIndex.finish(builder)
            .then(async (index) => {
              try {
                await index.save(file, key, { sync });
              } catch (err) {
                // The index is not lost with its file: it goes over in shared memory, its failure with it.
                reply({ type: 'built', shared: index.toShared(), unsaved: errorText(err) });
                return;
              }
              reply({ type: 'saved', companies: index.size });
            })
            .catch(fail);
        } else
          CompanySearchIndex.finish(builder)
            .then((index) => reply({ type: 'built', shared: index.toShared() }))
            .catch(fail);
        break;
      case 'save': {
        if (!kept) throw new Error('search index asked to be saved before its build ended');
        const { file, key } = m;
        kept
          .then(
            async (index) => {
              await index.save(file, key);
              reply({ type: 'saved', companies: index.size });
            },
            // Its failure is answered already.
            () => undefined,
          )
          .catch(fail);
        break;
      }
    }
  } catch (err) {
    fail(err);
  }
});
