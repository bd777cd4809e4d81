import v8 from 'node:v8';

/**
 * Turns V8's allocation-site pretenuring off for the process. V8 allocates objects straight in
 * the old generation once those made at the same place in the code have outlived a few young
 * collections. The full reads of a first start (the search index, the walks' memory, the
 * point-read file: a row object per company or relationship) and an import's staging (a row per
 * line of its files) made such places long-lived early on, and later rows made there, which die
 * at once, then filled the old generation, where only a full collection frees them. At 1M
 * companies a start with no derived files peaked at 3.5 GiB with it and 2.8 without (the main heap
 * grew to 1.1 GB in 15 s while the point-read file was written), and an import took 180–183 s of
 * wall time without it against 192–226 s (bench/README.md). Neither a server nor an import keeps
 * much of what it allocates per request or per row, so neither has much to gain from
 * pretenuring. The worker threads share the setting (V8's flags are the process's).
 */
export function turnPretenuringOff(): void {
  v8.setFlagsFromString('--no-allocation-site-pretenuring');
}
