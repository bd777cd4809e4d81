import type { Logger } from './logger';

/**
 * Runs one step of a shutdown, waiting for it at most `ms`: a part that cannot close (a database
 * connection whose server stopped answering in the middle of the close, say) must not hold the
 * whole process's shutdown for ever, nor the parts after it. Past the bound, or when the step
 * fails, a warning names the part and the shutdown goes on.
 */
export async function stopWithin(
  name: string,
  stop: () => Promise<void>,
  ms: number,
  log: Logger,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), ms);
    timer.unref();
  });
  try {
    const outcome = await Promise.race([stop().then(() => 'done' as const), late]);
    if (outcome === 'late')
      log.warn({ part: name, ms }, 'shutdown: a part did not close in time; going on without it');
  } catch (err) {
    log.warn({ err, part: name }, 'shutdown: a part failed to close');
  } finally {
    clearTimeout(timer);
  }
}
