/**
 * Worker-thread entry point of the importer: fills the evidence buckets and
 * writes the Edge rows from them as stage.ts asks (see evidence-buckets.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
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
      case 'port':
        return;
    }
  };
  // Requests are handled one after the other, in order, each answered when done, on the channel it
  // came by: the parent's, or a port the parent passed on to another thread.
  let chain = store.open();
  let failed = false;
  const ports: MessagePort[] = [];
  const listen = (from: MessagePort): void => {
    from.on('message', (m: EvidenceWorkerRequest) => take(m, from));
  };
  const take = (m: EvidenceWorkerRequest, from: MessagePort): void => {
    chain = chain
      .then(() => {
        if (m.type !== 'port') return handle(m);
        ports.push(m.port);
        listen(m.port);
      })
      .then(() => {
        from.postMessage({ type: 'done' } satisfies EvidenceWorkerReply);
        // The last answer is out: closing the ports lets the thread end.
        if (m.type === 'finish') for (const p of [port, ...ports]) p.close();
      });
    chain.catch((e: unknown) => {
      if (failed) return;
      failed = true;
      // Rethrown outside the promise so that the parent's 'error' handler receives it.
      setImmediate(() => {
        throw e;
      });
    });
  };
  listen(port);
}
