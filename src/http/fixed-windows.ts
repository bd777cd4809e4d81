/** A key's counting window: `hits` since it began; it ends at `resetAt` (ms since the epoch). */
export interface CountWindow {
  hits: number;
  resetAt: number;
}

/**
 * Fixed counting windows per key, in this process's memory and read
 * synchronously. A key's window starts at its first hit; windows that have
 * ended are dropped once per window length, so the map holds only keys seen
 * lately. `create` makes a key's entry, which may carry more than the count.
 */
export class FixedWindows<W extends CountWindow = CountWindow> {
  private readonly windows = new Map<string, W>();
  private nextSweep = 0;

  constructor(
    private readonly windowMs: number,
    private readonly create: (key: string, resetAt: number) => W,
  ) {}

  /** Whether no window is open (entries already ended may still count until the next sweep). */
  get empty(): boolean {
    return this.windows.size === 0;
  }

  /** Counts one hit for `key` and returns its window. */
  hit(key: string, now: number): W {
    this.sweep(now);
    let w = this.windows.get(key);
    if (!w) {
      w = this.create(key, now + this.windowMs);
      this.windows.set(key, w);
    } else if (w.resetAt <= now) {
      w.hits = 0;
      w.resetAt = now + this.windowMs;
    }
    w.hits += 1;
    return w;
  }

  /** The key's window if one is open, without counting. */
  peek(key: string, now: number): W | undefined {
    this.sweep(now);
    const w = this.windows.get(key);
    return w && w.resetAt > now ? w : undefined;
  }

  private sweep(now: number): void {
    if (now < this.nextSweep) return;
    for (const [k, w] of this.windows) if (w.resetAt <= now) this.windows.delete(k);
    this.nextSweep = now + this.windowMs;
  }
}
