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

/**
 * Node flags the server is started with: `npm start`, the container's entry point and the
 * benchmarks pass them on node's command line (`test/unit/serve-flags.test.ts` holds the first two
 * to it). They cannot be set from here as `turnPretenuringOff` is: V8 sizes its heap when the
 * process starts and ignores a later change of these.
 *
 * `--max-semi-space-size=32` doubles V8's default young generation (16 MB a half on 64 bits).
 * Every read allocates objects that die once it is answered; with 32 requests in flight the
 * default one fills often, and each collection costs more than the little it keeps. At 1M companies
 * (bench/run.mjs, read cache off, two sets of three runs, 2026-11-30) every read case answered
 * 1–4% more requests a second with it at 1–3% less server CPU a request, healthz included, and the
 * server grew to 2.55 GiB at most against 2.46; the import ran as fast with it as without.
 * Worker threads take it too (V8's flags are the process's).
 */
export const SERVE_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

/**
 * The environment the server is meant to run with, which the image sets (its Dockerfile's `ENV`;
 * `test/unit/serve-flags.test.ts` holds it to this) and the benchmarks give the servers they start.
 * Like the flags, it must be there when the process starts: the C library reads it once.
 *
 * `MALLOC_ARENA_MAX=2`: glibc gives each thread that allocates (the embedded engine's query
 * threads, Node's thread pool, the search and build threads) a memory arena of its own, up to 8 a
 * core, and keeps what is freed there for that thread. A server's first start with no derived files
 * at 1M companies held some 400–600 MB more in those arenas than with two (bench/README.md);
 * steadily serving, reads ran as fast either way. `npm start` does not set it: a variable on the
 * script's command line would stop the script on shells that are not POSIX. The server says at
 * start when it is missing on Linux.
 */
export const SERVE_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * The variables of SERVE_ENV this process was started without, where they take effect (the
 * arenas: Linux): for the server to say so. A variable set to another value is the operator's choice.
 */
export function missingServeEnv(
  env: Readonly<Record<string, string | undefined>> = process.env,
  platform: string = process.platform,
): string[] {
  if (platform !== 'linux') return [];
  return Object.keys(SERVE_ENV).filter((name) => (env[name] ?? '') === '');
}

/**
 * The flags of SERVE_NODE_FLAGS this process was started without, on node's command line
 * (`execArgv`) or in NODE_OPTIONS: for the server to say so. A flag given with another value counts
 * as given, the operator's choice.
 */
export function missingServeFlags(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map(flagName));
  return SERVE_NODE_FLAGS.filter((flag) => !given.has(flagName(flag)));
}

/** A flag's name, without its value; node reads `_` and `-` in V8's flag names alike. */
function flagName(flag: string): string {
  return flag.split('=')[0]!.replace(/_/g, '-');
}
