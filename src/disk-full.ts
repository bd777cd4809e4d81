/**
 * Whether an error is a write refused for want of room: Node's codes, and the embedded engine's own
 * refusals, which carry no code, by their words.
 */
export function isDiskFull(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  const code = (e as NodeJS.ErrnoException).code;
  return (
    code === 'ENOSPC' || code === 'EDQUOT' || /no space left on device|disk quota exceeded/i.test(e.message)
  );
}
