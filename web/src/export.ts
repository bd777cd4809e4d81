import { ApiError, gql, rest } from './api';
import { field, h, isDay, replace } from './dom';
import { webHref } from './links';

interface Job {
  run_id: string;
  state: { life_cycle_state: string; result_state?: string; state_message: string };
  output: { result?: string | null; truncated?: boolean | null } | null;
}

const FILE_NAMES: Record<string, string> = {
  tierview_file: 'Tier view (CSV)',
  relationships_file: 'Relationships (CSV)',
  tiers_file: 'Tiers (CSV)',
  companies_file: 'Companies (CSV)',
};

/**
 * A link to this server's own downloads signed for another of its names (without PUBLIC_URL the
 * server names itself localhost), taken on the name this page was opened by, which reaches it: the
 * signature covers the file and the expiry, not the host. Other links (Cloud Storage's, a prefix
 * behind a proxy) are left as they are.
 */
function onThisOrigin(href: string): string {
  const url = new URL(href, location.href);
  if (url.origin === location.origin || !url.pathname.startsWith('/downloads/')) return href;
  return `${location.origin}${url.pathname}${url.search}`;
}

/**
 * A fresh Idempotency-Key: 32 hex digits from the browser's random source (crypto.randomUUID is
 * missing where the app is served over plain HTTP by another name than localhost).
 */
function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * When a run's links stop working, as they say it: `expires` (seconds since 1970) on this server's
 * own links, X-Goog-Date and X-Goog-Expires on Cloud Storage's. Null when a link says neither.
 */
function expiryOf(href: string): Date | null {
  const p = new URL(href, location.href).searchParams;
  const at = Number(p.get('expires') ?? NaN);
  if (Number.isFinite(at) && at > 0) return new Date(at * 1000);
  const signed = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(p.get('X-Goog-Date') ?? '');
  const lasts = Number(p.get('X-Goog-Expires') ?? NaN);
  if (!signed || !Number.isFinite(lasts)) return null;
  const [y = 0, mo = 1, d = 1, h = 0, mi = 0, sec = 0] = signed.slice(1).map(Number);
  return new Date(Date.UTC(y, mo - 1, d, h, mi, sec) + lasts * 1000);
}

/** The line above a run's downloads: until when its links work (the first to expire), where they say. */
function expiryLine(hrefs: string[]): string {
  const times = hrefs.map(expiryOf).filter((d): d is Date => d !== null);
  if (times.length === 0) return 'Links expire; download now:';
  const first = new Date(Math.min(...times.map((d) => d.getTime())));
  const sameDay = first.toDateString() === new Date().toDateString();
  const when = first.toLocaleString(undefined, {
    ...(sameDay ? {} : { month: 'short', day: 'numeric' }),
    hour: '2-digit',
    minute: '2-digit',
  });
  return `The links work until ${when}; download before then:`;
}

/** Where this tab keeps the last run started for a company, so that its panel finds it again. */
const lastRunKey = (vid: string) => `tiergraph.export.${vid}`;

/** The last run started for a company, with the panel's options it was started with. */
interface KeptRun {
  run_id: string;
  direction: string;
  tiers: string;
  since: string;
  multiple: boolean;
  excel: boolean;
}

/** A kept run as stored; a bare run id (as kept before options were) with the defaults. */
function keptRunOf(stored: string): KeptRun | null {
  const bare = { direction: 'supplier', tiers: '2', since: '', multiple: false, excel: false };
  if (/^\d+$/.test(stored)) return { run_id: stored, ...bare };
  try {
    const k = JSON.parse(stored) as Partial<KeptRun>;
    if (typeof k.run_id !== 'string' || !/^\d+$/.test(k.run_id)) return null;
    return {
      run_id: k.run_id,
      direction: k.direction === 'customer' ? 'customer' : 'supplier',
      tiers: typeof k.tiers === 'string' && /^([1-9]|1\d|20)$/.test(k.tiers) ? k.tiers : bare.tiers,
      since: typeof k.since === 'string' && isDay(k.since) ? k.since : '',
      multiple: k.multiple === true,
      excel: k.excel === true,
    };
  } catch {
    return null;
  }
}

/**
 * Starts a tier-view export with the API's options, follows it, and offers its files. The run is
 * followed while the panel is on screen; coming back to the company follows it again (or offers
 * its files), as long as the server still has it.
 */
export function exportPanel(vid: string, name: string): HTMLElement {
  const direction = h(
    'select',
    { id: 'export-direction' },
    h('option', { value: 'supplier' }, 'Suppliers'),
    h('option', { value: 'customer' }, 'Customers'),
  );
  // The last run started here, with its options (shown again below, with its files).
  const stored = sessionStorage.getItem(lastRunKey(vid));
  const kept = stored === null ? null : keptRunOf(stored);
  const tiers = h('select', { id: 'export-tiers' });
  // As many tiers as this server exports (MAX_TIERS): 1 to 6 until it says, and if it cannot.
  // The choice is kept when the options change, or the deepest one offered when it is deeper.
  const offerTiers = (max: number, chosen: string) => {
    const pick = Math.min(Math.max(1, Number(chosen) || 2), max);
    replace(
      tiers,
      Array.from({ length: max }, (_, i) => i + 1).map((n) =>
        h('option', { value: n, selected: n === pick }, String(n)),
      ),
    );
  };
  // Until the server says: 1 to 6, or as deep as the kept run went.
  offerTiers(Math.max(6, Number(kept?.tiers ?? 0)), kept?.tiers ?? '2');
  void gql<{ tierViewLimits: { max_tiers: number } }>('query TierViewLimits { tierViewLimits { max_tiers } }')
    // The choice made meanwhile stays.
    .then(({ tierViewLimits: { max_tiers } }) => offerTiers(max_tiers, tiers.value))
    .catch(() => undefined);
  const since = h('input', { type: 'date', id: 'export-date' });
  const multiple = h('input', { type: 'checkbox', id: 'export-multiple' });
  const excel = h('input', { type: 'checkbox', id: 'export-excel' });
  const status = h('div', { role: 'status', class: 'job' });
  const start = h('button', { type: 'submit' }, 'Start export');

  // The options of the run whose files are shown (null: none shown, or not known), and a line that
  // says so when the options above have been changed since: the files are not of those.
  let filesOf: KeptRun | null = null;
  const optionsNow = (): Omit<KeptRun, 'run_id'> => ({
    direction: direction.value,
    tiers: tiers.value,
    since: since.value,
    multiple: multiple.checked,
    excel: excel.checked,
  });
  const otherOptions = h('p', { class: 'muted small', hidden: true });
  const sayOtherOptions = () => {
    const now = optionsNow();
    const changed =
      filesOf !== null && (Object.keys(now) as (keyof typeof now)[]).some((k) => now[k] !== filesOf![k]);
    otherOptions.hidden = !changed;
    otherOptions.textContent = changed
      ? `The files below are of run ${filesOf!.run_id}, started with other options; Start export for the ones chosen.`
      : '';
  };
  // The run this panel follows: starting another stops following the one before.
  let following = 0;
  const follow = async (runId: string) => {
    const mine = ++following;
    const path = `/v1/jobs/${encodeURIComponent(runId)}/`;
    // Polls that failed in a row: a server restarting or a network that drops for a moment is waited
    // out (the run goes on without the page), with a longer wait after each failure.
    let failed = 0;
    let shown = '';
    const say = (text: string, spinner: boolean, cancel: boolean) => {
      // Drawn again only when it changed, so that a screen reader does not repeat it every poll.
      if (text === shown) return;
      shown = text;
      replace(
        status,
        h('p', {}, spinner ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null, text),
        cancel
          ? h(
              'button',
              {
                type: 'button',
                class: 'small',
                onclick: (e: Event) => {
                  (e.currentTarget as HTMLButtonElement).disabled = true;
                  rest<Job>(`${path}cancel`, { method: 'POST' }).catch((err: Error) =>
                    status.append(h('p', { class: 'error', role: 'alert' }, err.message)),
                  );
                },
              },
              'Cancel run',
            )
          : null,
      );
    };
    for (;;) {
      let job: Job;
      try {
        job = await rest<Job>(path);
        failed = 0;
      } catch (err) {
        // A run no longer followed (another was started) tells nothing, failure included.
        if (mine !== following) return;
        const passing = err instanceof ApiError && [0, 429, 502, 503, 504].includes(err.status);
        if (!passing) throw err;
        failed++;
        // At least a second apart, whatever a Retry-After says.
        const waitS = Math.max(1, Math.min(30, err.retryAfterS ?? 2 ** Math.min(failed, 5)));
        const why =
          err.status === 0
            ? 'the server cannot be reached.'
            : /[.!?]$/.test(err.message)
              ? err.message
              : `${err.message}.`;
        say(`Run ${runId}: ${why} Asking again in ${waitS} s.`, false, false);
        await new Promise((r) => setTimeout(r, waitS * 1000));
        if (!status.isConnected || mine !== following) return;
        continue;
      }
      if (mine !== following) return;
      const s = job.state;
      if (s.life_cycle_state === 'PENDING' || s.life_cycle_state === 'RUNNING') {
        say(
          `Run ${runId}: ${s.life_cycle_state.toLowerCase()}${s.state_message ? ` · ${s.state_message}` : ''}`,
          true,
          true,
        );
        await new Promise((r) => setTimeout(r, 700));
        // Left for another page: no more polls (the page finds the run again on return).
        if (!status.isConnected || mine !== following) return;
        continue;
      }
      if (s.result_state !== 'SUCCESS') {
        replace(
          status,
          h(
            'p',
            { class: 'error' },
            `Run ${runId} ended ${s.result_state ?? s.life_cycle_state}: ${s.state_message}`,
          ),
        );
        return;
      }
      const files = JSON.parse(job.output?.result ?? '{}') as Record<string, string>;
      const started = keptRunOf(sessionStorage.getItem(lastRunKey(vid)) ?? '');
      filesOf = started?.run_id === runId ? started : null;
      sayOtherOptions();
      replace(
        status,
        h(
          'p',
          {},
          `Run ${runId} finished${job.output?.truncated ? ' (truncated at the row limit)' : ''}` +
            // What the files need said: no relationship matched, or companies left out per tier.
            `${s.state_message ? `: ${s.state_message}` : ''}. ${expiryLine(Object.values(files))}`,
        ),
        h(
          'ul',
          { class: 'plain downloads' },
          Object.entries(files).map(([k, href]) => {
            const target = webHref(href, location.href);
            const label = FILE_NAMES[k] ?? k;
            return h(
              'li',
              {},
              target === null
                ? `${label}: no web address to download it from`
                : h('a', { href: onThisOrigin(target), download: '', class: 'button' }, `Download ${label}`),
            );
          }),
        ),
      );
      return;
    }
  };

  // A start whose answer never came (the connection dropped, a proxy timed out) may have started the
  // run all the same: starting again with the same options sends the same key, so the server answers
  // with that run instead of starting a second. Other options, or a start answered, take a new key.
  let unanswered: { key: string; body: string } | null = null;
  const form = h(
    'form',
    {
      class: 'filters',
      onsubmit: (e: Event) => {
        e.preventDefault();
        start.disabled = true;
        filesOf = null;
        sayOtherOptions();
        replace(status, h('p', {}, 'Starting…'));
        const body = {
          root_nodes: vid,
          num_tiers: Number(tiers.value),
          direction: direction.value,
          ...(since.value ? { min_evid_date: since.value } : {}),
          output_multiple_tables: multiple.checked,
          ...(excel.checked ? { csv_bom: true } : {}),
        };
        const text = JSON.stringify(body);
        if (unanswered?.body !== text) unanswered = { key: newIdempotencyKey(), body: text };
        rest<{ run_id: number }>('/v1/tierviewjob/', {
          method: 'POST',
          body,
          headers: { 'Idempotency-Key': unanswered.key },
        })
          .then((r) => {
            unanswered = null;
            // With the options it was started with, which the panel shows again with the run.
            const kept: KeptRun = { run_id: String(r.run_id), ...optionsNow() };
            sessionStorage.setItem(lastRunKey(vid), JSON.stringify(kept));
            return follow(String(r.run_id));
          })
          .catch((err: Error) => replace(status, h('p', { class: 'error', role: 'alert' }, err.message)))
          .finally(() => (start.disabled = false));
      },
    },
    field('Direction', direction),
    field('Tiers', tiers),
    // An export walks relationships with evidence on or after the day, where lists and the map keep
    // those with evidence after it (the interface defines the two so): the labels say which.
    field('Evidence on or after', since),
    h('label', { class: 'check' }, multiple, ' Three files'),
    h('label', { class: 'check' }, excel, ' For Excel'),
    start,
  );
  form.addEventListener('input', sayOtherOptions);
  form.addEventListener('change', sayOtherOptions);
  if (kept) {
    // The options of the run shown, not the defaults: what its files hold.
    direction.value = kept.direction;
    since.value = kept.since;
    multiple.checked = kept.multiple;
    excel.checked = kept.excel;
    // Once the panel is on the page; a run the server no longer has is forgotten.
    setTimeout(() => {
      follow(kept.run_id).catch((err: Error) => {
        // A run the server no longer has (expired, or another server's) is forgotten; any other
        // failure is told, and the run kept for the next visit.
        if (err instanceof ApiError && err.status === 404) {
          if (sessionStorage.getItem(lastRunKey(vid)) === stored) sessionStorage.removeItem(lastRunKey(vid));
          replace(status);
        } else replace(status, h('p', { class: 'error', role: 'alert' }, err.message));
      });
    }, 0);
  }
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'export-h' },
    h('h2', { id: 'export-h' }, 'Export tier view'),
    h(
      'p',
      { class: 'muted' },
      `Every supplier or customer of ${name}, tier by tier, as CSV. Large networks take a while; this page follows the run.`,
    ),
    form,
    otherOptions,
    status,
  );
}
