/**
 * Worker-thread entry point of the importer: fills the evidence buckets and
 * writes the Edge rows from them as stage.ts asks (see evidence-buckets.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { BucketStore } from './evidence-buckets';
import type { EvidenceWorkerData, EvidenceWorkerReply, EvidenceWorkerRequest } from './evidence-buckets';

const port = parentPort;
if (port !== null) {
  const { dir, nBuckets, nEdges } = workerData as EvidenceWorkerData;
  const store = new BucketStore(dir, nBuckets, nEdges);
  const handle = async (m: EvidenceWorkerRequest): Promise<void> => {
    switch (m.type) {
      case 'add':
        return store.add(Buffer.from(m.records.buffer, m.records.byteOffset, m.records.byteLength));
      case 'reset':
        return store.reset();
      case 'seal':
        return store.seal();
      case 'edges-file':
        return store.startEdges(m.path);
      case 'edges':
        return store.writeEdges(
          m.b,
          m.lo,
          m.hi,
          Buffer.from(m.prefixes.buffer, m.prefixes.byteOffset, m.prefixes.byteLength),
        );
      case 'finish':
        return store.finishEdges();
    }
  };
  // Requests are handled one after the other, in order, each answered when done.
  let chain = store.open();
  let failed = false;
  port.on('message', (m: EvidenceWorkerRequest) => {
    chain = chain
      .then(() => handle(m))
      .then(() => {
        port.postMessage({ type: 'done' } satisfies EvidenceWorkerReply);
        // The last answer is out: closing the port lets the thread end.
        if (m.type === 'finish') port.close();
      });
    chain.catch((e: unknown) => {
      if (failed) return;
      failed = true;
      // Rethrown outside the promise so that the parent's 'error' handler receives it.
      setImmediate(() => {
        throw e;
      });
    });
  });
}
