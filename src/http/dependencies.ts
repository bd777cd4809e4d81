/** What a readiness check found of each service the server depends on. */
export type Reach = 'reachable' | 'unreachable';

/**
 * Whether the services a server answers from (a Neo4j server, a jobs database) answer now, for
 * `/readyz`. Each is asked with a bound on the wait (a driver may otherwise wait half a minute for a
 * server that is gone), at most once per `freshMs` however often `/readyz` is polled, and one
 * check at a time: load balancers poll it from several places at once.
 */
export class Dependencies {
  private last: { at: number; found: Record<string, Reach> } | null = null;
  private asking: Promise<Record<string, Reach>> | null = null;

  constructor(
    private readonly checks: Record<string, () => Promise<unknown>>,
    private readonly waitMs = 2000,
    private readonly freshMs = 1000,
  ) {}

  /** Each dependency's state; an empty record when there is none to check (everything in process). */
  check(): Promise<Record<string, Reach>> {
    if (this.last && Date.now() - this.last.at < this.freshMs) return Promise.resolve(this.last.found);
    this.asking ??= this.askAll().finally(() => (this.asking = null));
    return this.asking;
  }

  /** Checks that have not settled yet, by name: a driver may hold one until its server is back. */
  private readonly unsettled = new Set<string>();

  private async askAll(): Promise<Record<string, Reach>> {
    const names = Object.keys(this.checks);
    const states = await Promise.all(names.map((name) => this.ask(name)));
    const found = Object.fromEntries(names.map((name, i) => [name, states[i]!]));
    this.last = { at: Date.now(), found };
    return found;
  }

  private async ask(name: string): Promise<Reach> {
    // The last check has had its wait and more without an answer: the server is still away, and
    // another check now would only queue behind it (polls during an outage would pile them up).
    if (this.unsettled.has(name)) return 'unreachable';
    this.unsettled.add(name);
    const answer = this.checks[name]!().then(
      (): Reach => 'reachable',
      (): Reach => 'unreachable',
    );
    void answer.finally(() => this.unsettled.delete(name));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Reach>((resolve) => {
      timer = setTimeout(() => resolve('unreachable'), this.waitMs);
    });
    try {
      return await Promise.race([answer, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
