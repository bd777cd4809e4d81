import { gql } from './api';
import {
  confidenceInput,
  confidenceOf,
  day,
  field,
  h,
  isDay,
  outLink,
  pct,
  percentOf,
  replace,
  setTitle,
} from './dom';
import { exportPanel } from './export';

interface Profile {
  vid: string;
  cid_id: string;
  name: string;
  company_legal_name: string | null;
  description: string | null;
  domains: string[];
  websites: string[];
  domiciled_country: string | null;
  incorporated_country: string | null;
  incorporation_date: string | null;
  ipo_date: string | null;
  is_active: boolean | null;
  is_public: boolean | null;
  is_freight_forwarder: boolean | null;
  hq_phone_number: string | null;
  aliases: string[];
  industry: string | null;
  industry_code_system: string | null;
  industry_code: string | null;
  is_cluster_parent: boolean;
  cluster_parent: { vid: string; name: string };
  count_suppliers: number;
  count_customers: number;
  count_supplier_evidence: number;
  count_customer_evidence: number;
  identifiers: { type: string; value: string }[];
  addresses: {
    address_line: string | null;
    city: string | null;
    region: string | null;
    postal_code: string | null;
    country: string | null;
    type: string | null;
  }[];
}

const PROFILE = `query Company($vid: ID!) {
  company(vid: $vid) {
    vid cid_id name company_legal_name description domains websites
    domiciled_country incorporated_country incorporation_date ipo_date
    is_active is_public is_freight_forwarder hq_phone_number is_cluster_parent
    aliases industry industry_code_system industry_code
    cluster_parent { vid name }
    count_suppliers count_customers count_supplier_evidence count_customer_evidence
    identifiers { type value }
    addresses { address_line city region postal_code country type }
  }
}`;

interface Counterpart {
  vid: string;
  name: string;
  country: string | null;
  count_suppliers: number;
  count_customers: number;
}

interface ListItem {
  supplier: Counterpart | null;
  customer: Counterpart | null;
  relationship: { confidence_score: number; latest_relationship_date: string | null; edge_ids: string[] };
  evidences: { evidence_types: string[] };
}

const list = (
  field: string,
  key: string,
) => `query List($vid: ID!, $c: Float, $date: Date, $limit: Int, $offset: Int) {
  page: ${field}(vid: $vid, confidence_score: $c, date: $date, limit: $limit, offset: $offset) {
    has_more
    results {
      ${key} { vid name country count_suppliers count_customers }
      relationship { confidence_score latest_relationship_date edge_ids }
      evidences { evidence_types }
    }
  }
}`;

interface EdgeDetail {
  edge_id: string;
  supplier_id: string;
  customer_id: string;
  supplier: { name: string } | null;
  customer: { name: string } | null;
  status_code: number | null;
  confidence_score: number;
  latest_edge_date: string | null;
  hs_codes: string[];
  evidences: {
    id: string;
    date: string | null;
    type: string | null;
    url: string | null;
    domain: string | null;
  }[];
}

const EDGE = `query Edge($id: ID!) {
  edge(edge_id: $id) {
    edge_id supplier_id customer_id status_code confidence_score latest_edge_date hs_codes
    supplier { name } customer { name }
    evidences { id date type url domain }
  }
}`;

const MEMBERS = `query Members($vid: ID!, $offset: Int) {
  company(vid: $vid) {
    cluster_members(limit: 10, offset: $offset) { has_more results { vid name country is_cluster_parent } }
  }
}`;

interface Members {
  has_more: boolean;
  results: { vid: string; name: string; country: string | null; is_cluster_parent: boolean }[];
}

/** Rows a list page may show; the first is the default. */
const PAGE_SIZES = [10, 25, 50, 100];
const yesNo = (b: boolean | null) => (b === null ? '—' : b ? 'yes' : 'no');

export async function companyView(main: HTMLElement, vid: string, _url: URL): Promise<void> {
  replace(main, h('p', { class: 'muted' }, 'Loading…'));
  // Not the page before's title while this one loads.
  setTitle(main, 'Loading… · tiergraph');
  const { company: c } = await gql<{ company: Profile }>(PROFILE, { vid });
  // Left before its profile came: its lists would ask for pages nobody sees, and keep their state in
  // the history entry of the page drawn since.
  if (!main.isConnected) return;
  setTitle(main, `${c.name} · tiergraph`);

  const evidence = h('section', { class: 'card evidence', 'aria-label': 'Evidence', hidden: true });
  const code = c.industry_code ? `${c.industry_code_system ?? 'code'} ${c.industry_code}` : null;
  const fields: [string, string | null][] = [
    ['Legal name', c.company_legal_name],
    ['Also known as', c.aliases.length > 0 ? c.aliases.join(', ') : null],
    ['Industry', c.industry && code ? `${c.industry} (${code})` : (c.industry ?? code)],
    ['Country of domicile', c.domiciled_country],
    ['Country of incorporation', c.incorporated_country],
    ['Incorporated', c.incorporation_date ? day(c.incorporation_date) : null],
    ['IPO', c.ipo_date ? day(c.ipo_date) : null],
    ['Active', yesNo(c.is_active)],
    ['Public', yesNo(c.is_public)],
    ['Freight forwarder', yesNo(c.is_freight_forwarder)],
    ['Phone', c.hq_phone_number],
    ['Domains', c.domains.length > 0 ? c.domains.join(', ') : null],
    [
      'Evidence',
      `${c.count_supplier_evidence.toLocaleString()} items on its suppliers, ${c.count_customer_evidence.toLocaleString()} on its customers`,
    ],
    ['vid', c.vid],
    ['Cluster id', c.cid_id],
  ];
  // A company with customers only (a raw-material producer, say) opens on the side that has a network.
  const customersOnly = c.count_suppliers === 0 && c.count_customers > 0;
  const mapLink = `/companies/${encodeURIComponent(c.vid)}/map${customersOnly ? '?direction=customer' : ''}`;

  replace(
    main,
    h(
      'div',
      { class: 'company-head' },
      h('div', {}, h('h1', {}, c.name), c.description ? h('p', { class: 'lead' }, c.description) : null),
      h('a', { class: 'button primary', href: mapLink }, 'Tier map'),
    ),
    h(
      'div',
      { class: 'grid' },
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'profile-h' },
        h('h2', { id: 'profile-h' }, 'Profile'),
        h(
          'dl',
          { class: 'fields' },
          fields.filter(([, v]) => v !== null).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
          c.websites.length > 0
            ? [
                h('dt', {}, 'Websites'),
                h(
                  'dd',
                  {},
                  c.websites.map((w, i) => [i > 0 ? ', ' : '', outLink(w, w)]),
                ),
              ]
            : null,
        ),
      ),
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'ids-h' },
        h('h2', { id: 'ids-h' }, 'Identifiers'),
        c.identifiers.length === 0
          ? h('p', { class: 'muted' }, 'None recorded.')
          : h(
              'dl',
              { class: 'fields' },
              c.identifiers.map((i) => [h('dt', {}, i.type), h('dd', {}, h('code', {}, i.value))]),
            ),
        h('h2', {}, 'Addresses'),
        c.addresses.length === 0
          ? h('p', { class: 'muted' }, 'None recorded.')
          : h(
              'ul',
              { class: 'plain' },
              c.addresses.map((a) =>
                h(
                  'li',
                  {},
                  a.type ? h('span', { class: 'tag' }, a.type) : null,
                  ' ',
                  [a.address_line, a.city, a.region, a.postal_code, a.country].filter(Boolean).join(', '),
                ),
              ),
            ),
        h('h2', {}, 'Cluster'),
        clusterPanel(c),
      ),
    ),
    h(
      'div',
      { class: 'grid' },
      relationships(c, 'suppliers', evidence),
      relationships(c, 'customers', evidence),
    ),
    evidence,
    exportPanel(c.vid, c.name),
  );
}

interface ListState {
  offset: number;
  size: number;
  c: number;
  date: string | null;
  /** The whole cluster's list, grouped by counterpart cluster (cluster_suppliers, cluster_customers). */
  cluster: boolean;
}

/**
 * A list's page and filters as kept in the current history entry's state, else as the address gives
 * them (a link shared or bookmarked: `?suppliers_offset=20&suppliers_c=0.5`), else the first page
 * unfiltered.
 */
function keptList(side: string): ListState {
  const kept = (history.state as { lists?: Record<string, Partial<ListState>> } | null)?.lists?.[side];
  const q = new URLSearchParams(location.search);
  const s: Partial<Record<keyof ListState, unknown>> = kept ?? {
    offset: q.get(`${side}_offset`),
    size: q.get(`${side}_size`),
    c: q.get(`${side}_c`),
    date: q.get(`${side}_date`),
    cluster: q.get(`${side}_cluster`) === '1',
  };
  const offset = Number(s.offset ?? 0);
  const size = Number(s.size ?? PAGE_SIZES[0]);
  const c = Number(s.c ?? 0);
  return {
    offset: Number.isInteger(offset) && offset >= 0 ? offset : 0,
    size: PAGE_SIZES.includes(size) ? size : PAGE_SIZES[0]!,
    c: Number.isFinite(c) && c >= 0 && c <= 1 ? c : 0,
    date: typeof s.date === 'string' && isDay(s.date) ? s.date : null,
    cluster: s.cluster === true,
  };
}

/**
 * Keeps a list's page and filters in the current history entry's state (the router's key stays) and
 * in its address, where they differ from the first page unfiltered, so that a link copied from the
 * address bar opens the list as it is shown.
 */
function keepList(side: string, list: ListState): void {
  const state = (history.state ?? {}) as { lists?: Record<string, ListState> };
  const url = new URL(location.href);
  const shown: Record<string, string | null> = {
    offset: list.offset > 0 ? String(list.offset) : null,
    size: list.size !== PAGE_SIZES[0] ? String(list.size) : null,
    c: list.c > 0 ? String(list.c) : null,
    date: list.date,
    cluster: list.cluster ? '1' : null,
  };
  for (const [k, v] of Object.entries(shown)) {
    if (v === null) url.searchParams.delete(`${side}_${k}`);
    else url.searchParams.set(`${side}_${k}`, v);
  }
  history.replaceState({ ...state, lists: { ...state.lists, [side]: list } }, '', url);
}

function relationships(c: Profile, side: 'suppliers' | 'customers', evidence: HTMLElement): HTMLElement {
  const key = side === 'suppliers' ? 'supplier' : 'customer';
  const total = side === 'suppliers' ? c.count_suppliers : c.count_customers;
  const title = side === 'suppliers' ? 'Suppliers' : 'Customers';
  const id = `${side}-h`;
  // The page and filters the list was left at in this history entry: Back, Forward and reload
  // come back to them rather than to the first page.
  const kept = keptList(side);
  // A company in a cluster of several also shows the cluster's list: every member's counterparts,
  // grouped by their clusters (each named by its parent), with the relationships' edges together.
  const clustered = c.is_cluster_parent || c.cluster_parent.vid !== c.vid;
  const wholeCluster = h('input', {
    type: 'checkbox',
    id: `${side}-cluster`,
    checked: clustered && kept.cluster,
  });
  const minC = confidenceInput(`${side}-c`, kept.c);
  const since = h('input', { type: 'date', id: `${side}-date`, value: kept.date ?? '' });
  const body = h('div', {});
  let offset = kept.offset;
  // A hub's thousand suppliers are read more easily a hundred at a time than ten.
  let size = kept.size;
  const sizes = h(
    'select',
    { id: `${side}-size`, class: 'short' },
    PAGE_SIZES.map((n) => h('option', { value: n, selected: n === size }, String(n))),
  );
  // The filters as last applied (Filter): paging keeps to them, whatever is typed meanwhile.
  let applied: Pick<ListState, 'c' | 'date' | 'cluster'> = {
    c: kept.c,
    date: kept.date,
    cluster: wholeCluster.checked,
  };
  // Only the answer to the latest request is drawn: an earlier one that comes late is dropped.
  let asked = 0;

  // The count in the heading is of all of them; with filters applied, a line says the list is fewer.
  // The cluster's list is another list, of counterpart clusters, whose number is not known: the
  // heading then says whose list it is instead.
  const count = h('span', { class: 'count' }, total.toLocaleString());
  const scope = h('span', {}, '');
  const filtered = h('p', { class: 'muted small', hidden: true });
  const sayFiltered = () => {
    count.hidden = applied.cluster;
    scope.textContent = applied.cluster ? 'of the whole cluster' : '';
    const parts = [
      applied.c > 0 ? `confidence at least ${percentOf(applied.c)}%` : null,
      applied.date ? `evidence after ${applied.date}` : null,
    ].filter(Boolean);
    filtered.hidden = parts.length === 0 && !applied.cluster;
    filtered.textContent = applied.cluster
      ? `The ${side} of every company of ${c.cluster_parent.name}'s cluster, by their clusters, each named by its parent` +
        `${parts.length === 0 ? '' : `: only those with ${parts.join(' and ')}`}.`
      : parts.length === 0
        ? ''
        : `Only those with ${parts.join(' and ')}, of ${total.toLocaleString()} in all.`;
  };

  const load = async (mine: number): Promise<boolean> => {
    replace(body, h('p', { class: 'muted' }, 'Loading…'));
    const field = applied.cluster ? `cluster_${side}` : side;
    const data = await gql<{ page: { has_more: boolean; results: ListItem[] } }>(list(field, key), {
      vid: c.vid,
      c: applied.c,
      date: applied.date,
      limit: size,
      offset,
    });
    if (mine !== asked) return false;
    const rows = data.page.results;
    replace(
      body,
      rows.length === 0
        ? h(
            'p',
            { class: 'muted' },
            offset > 0
              ? 'No more.'
              : applied.c > 0 || applied.date
                ? `No ${side} match these filters.`
                : `No ${side} recorded${applied.cluster ? ' for the cluster' : ''}.`,
          )
        : h(
            'table',
            { class: 'list' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', { scope: 'col' }, 'Company'),
                // "Conf." on a phone, where the column's heading would otherwise set its width.
                h(
                  'th',
                  { scope: 'col', class: 'num' },
                  h('span', { class: 'sr-only' }, 'Confidence'),
                  h('span', { class: 'wide-label', 'aria-hidden': 'true' }, 'Confidence'),
                  h('span', { class: 'narrow-label', 'aria-hidden': 'true' }, 'Conf.'),
                ),
                h('th', { scope: 'col' }, 'Latest evidence'),
                h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Evidence')),
              ),
            ),
            h(
              'tbody',
              {},
              rows.map((r) => {
                const other = r[key]!;
                // In the cluster's list both sides are clusters, named by their parents.
                const [own, theirs] = applied.cluster
                  ? [`${c.cluster_parent.name}'s cluster`, `${other.name}'s cluster`]
                  : [c.name, other.name];
                const [s, cu] = side === 'suppliers' ? [theirs, own] : [own, theirs];
                return h(
                  'tr',
                  {},
                  h(
                    'td',
                    {},
                    h('a', { href: `/companies/${encodeURIComponent(other.vid)}` }, other.name),
                    other.country ? h('div', { class: 'muted small' }, other.country) : null,
                  ),
                  h('td', { class: 'num' }, confidenceBar(r.relationship.confidence_score)),
                  h('td', {}, day(r.relationship.latest_relationship_date)),
                  h(
                    'td',
                    {},
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'small',
                        'aria-label': `Evidence: ${s} supplies ${cu}`,
                        onclick: (e: Event) =>
                          void showEvidence(
                            evidence,
                            s,
                            cu,
                            r.relationship.edge_ids,
                            e.currentTarget as HTMLElement,
                            applied.cluster,
                          ),
                      },
                      'Evidence',
                    ),
                  ),
                );
              }),
            ),
          ),
      h(
        'nav',
        { class: 'pager', 'aria-label': `${title} pages` },
        offset > 0
          ? h('button', { type: 'button', onclick: () => go(Math.max(0, offset - size)) }, 'Previous')
          : null,
        rows.length > 0
          ? h(
              'span',
              { class: 'muted' },
              // Of how many only when no filter applies: the count of a filtered list, or of the
              // cluster's counterpart clusters, is not known.
              `${offset + 1}–${offset + rows.length}${applied.c > 0 || applied.date || applied.cluster ? '' : ` of ${total.toLocaleString()}`}`,
            )
          : null,
        data.page.has_more ? h('button', { type: 'button', onclick: () => go(offset + size) }, 'Next') : null,
      ),
    );
    return true;
  };
  const go = (to: number) => {
    // A pager button that had focus is replaced with the page: focus goes to its successor.
    const active = document.activeElement;
    const pager = active instanceof HTMLButtonElement && body.contains(active) ? active.textContent : null;
    offset = to;
    keepList(side, { offset, size, ...applied });
    const mine = ++asked;
    load(mine).then(
      (drawn) => {
        // Unless the analyst has moved on meanwhile (focus is then elsewhere than the page's start).
        const lost = document.activeElement === null || document.activeElement === document.body;
        if (drawn && pager !== null && lost) refocus(body, pager);
      },
      (e: Error) => {
        // The message, and a way to ask again that keeps the page and filters (and the rest of the page).
        if (mine === asked)
          replace(
            body,
            h('p', { role: 'alert' }, e.message),
            h('button', { type: 'button', class: 'small', onclick: () => go(offset) }, 'Try again'),
          );
      },
    );
  };
  // A new page size applies at once, from the page that holds the first row shown.
  sizes.addEventListener('change', () => {
    size = Number(sizes.value);
    go(Math.floor(offset / size) * size);
  });
  wholeCluster.addEventListener('change', () => {
    applied = { ...applied, cluster: wholeCluster.checked };
    sayFiltered();
    go(0);
  });
  const form = h(
    'form',
    {
      class: 'filters',
      onsubmit: (e: Event) => {
        e.preventDefault();
        applied = { c: confidenceOf(minC.value), date: since.value || null, cluster: wholeCluster.checked };
        sayFiltered();
        go(0);
      },
    },
    // Like the page size, the scope applies at once (with the filters as last applied).
    clustered ? h('label', { class: 'check' }, wholeCluster, ' Whole cluster') : null,
    field('Min. confidence (%)', minC),
    field('Evidence after', since),
    h('button', { type: 'submit', class: 'small' }, 'Filter'),
    field('Per page', sizes),
  );
  sayFiltered();
  go(offset);
  return h(
    'section',
    { class: 'card', 'aria-labelledby': id },
    h('h2', { id }, `${title} `, count, scope),
    form,
    filtered,
    body,
  );
}

/** Focus on the pager button labelled `label` in `body`, else its other button, else its first link. */
function refocus(body: HTMLElement, label: string): void {
  const buttons = [...body.querySelectorAll<HTMLButtonElement>('nav.pager button')];
  const to = buttons.find((b) => b.textContent === label) ?? buttons[0] ?? body.querySelector('a');
  to?.focus();
}

/** The company's cluster: its parent and its members, a page at a time. */
function clusterPanel(c: Profile): HTMLElement {
  const parent = c.cluster_parent;
  // Alone in its cluster: the sentence says all, a list of its one member would only repeat it.
  if (!c.is_cluster_parent && parent.vid === c.vid)
    return h('div', {}, h('p', {}, 'This company is not part of a larger cluster.'));
  const list = h('ul', { class: 'plain', 'aria-label': 'Cluster members' });
  const more = h('button', { type: 'button', class: 'small', hidden: true }, 'More members');
  let offset = 0;
  const load = async () => {
    const { company } = await gql<{ company: { cluster_members: Members } }>(MEMBERS, { vid: c.vid, offset });
    const page = company.cluster_members;
    // The button that had focus is hidden after the last page: focus goes to the first member it added.
    const hadFocus = document.activeElement === more;
    const first = list.children.length;
    for (const m of page.results) {
      list.append(
        h(
          'li',
          {},
          m.vid === c.vid
            ? h('strong', {}, m.name)
            : h('a', { href: `/companies/${encodeURIComponent(m.vid)}` }, m.name),
          m.country ? h('span', { class: 'muted small' }, ` · ${m.country}`) : null,
          m.is_cluster_parent ? h('span', { class: 'tag' }, 'parent') : null,
        ),
      );
    }
    offset += page.results.length;
    more.hidden = !page.has_more;
    if (hadFocus && more.hidden) {
      const added = list.children[first] as HTMLElement | undefined;
      (added?.querySelector('a') ?? added)?.focus();
    }
  };
  const failed = (e: Error) => list.append(h('li', { role: 'alert' }, e.message));
  more.addEventListener('click', () => void load().catch(failed));
  void load().catch(failed);
  return h(
    'div',
    {},
    h(
      'p',
      {},
      c.is_cluster_parent
        ? 'This company is the parent of its cluster.'
        : ['Parent: ', h('a', { href: `/companies/${encodeURIComponent(parent.vid)}` }, parent.name)],
    ),
    list,
    more,
  );
}

function confidenceBar(x: number): HTMLElement {
  const bar = h('span', { class: 'bar' });
  // Set on the element's style rather than as a style attribute, which the page's policy refuses.
  bar.style.width = `${Math.round(x * 100)}%`;
  return h(
    'span',
    { class: 'conf', title: `confidence ${x}` },
    h('span', { class: 'track', 'aria-hidden': 'true' }, bar),
    h('span', {}, pct(x)),
  );
}

/** How many relationships' evidence each panel was asked for. */
const evidenceAsked = new WeakMap<HTMLElement, number>();

/** A relationship's status code as words (docs/import-format.md): 1 active, 2 ended; others as given. */
function statusOf(code: number): string {
  return code === 1 ? 'active' : code === 2 ? 'ended (kept for history)' : `status ${code}`;
}

async function showEvidence(
  panel: HTMLElement,
  supplier: string,
  customer: string,
  edgeIds: string[],
  /** The button that opened the panel: focus goes back to it when the panel closes. */
  opener?: HTMLElement,
  /** Between two clusters: each edge then names the two member companies it joins. */
  clusters = false,
): Promise<void> {
  const close = () => {
    panel.hidden = true;
    opener?.focus();
  };
  const head = () =>
    h(
      'div',
      { class: 'row spread' },
      h('h2', {}, `Evidence: ${supplier} → ${customer}`),
      h(
        'button',
        {
          type: 'button',
          class: 'small',
          onclick: close,
        },
        'Close',
      ),
    );
  panel.hidden = false;
  // Escape closes it as the Close button does, wherever in the panel focus is.
  panel.onkeydown = (e: KeyboardEvent) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    close();
  };
  replace(panel, head(), h('p', { class: 'muted' }, 'Loading…'));
  panel.scrollIntoView({ block: 'start' });
  // The relationship asked for last is the one shown, however the answers arrive.
  const mine = (evidenceAsked.get(panel) ?? 0) + 1;
  evidenceAsked.set(panel, mine);
  let edges: EdgeDetail[];
  try {
    edges = await Promise.all(
      edgeIds.map((id) => gql<{ edge: EdgeDetail }>(EDGE, { id }).then((d) => d.edge)),
    );
  } catch (e) {
    if (evidenceAsked.get(panel) !== mine) return;
    replace(panel, head(), h('p', { role: 'alert', class: 'error' }, (e as Error).message));
    return;
  }
  if (evidenceAsked.get(panel) !== mine) return;
  replace(
    panel,
    head(),
    edges.map((e) =>
      h(
        'div',
        { class: 'edge' },
        h(
          'p',
          { class: 'muted' },
          clusters
            ? h('strong', {}, `${e.supplier?.name ?? e.supplier_id} → ${e.customer?.name ?? e.customer_id}`)
            : null,
          clusters ? ' · ' : null,
          `Edge ${e.edge_id} · confidence ${pct(e.confidence_score)} · latest ${day(e.latest_edge_date)}`,
          e.status_code !== null ? ` · ${statusOf(e.status_code)}` : '',
          e.hs_codes.length > 0 ? ` · HS ${e.hs_codes.join(', ')}` : '',
        ),
        h(
          'ol',
          { class: 'evidence-list' },
          e.evidences.map((ev) =>
            h(
              'li',
              {},
              h('span', { class: 'date' }, day(ev.date)),
              ev.type ? h('span', { class: 'tag' }, ev.type) : null,
              ev.url ? outLink(ev.url, ev.domain ?? ev.url) : h('span', { class: 'muted' }, 'no link'),
            ),
          ),
        ),
      ),
    ),
  );
  panel.querySelector('h2')?.setAttribute('tabindex', '-1');
  (panel.querySelector('h2') as HTMLElement | null)?.focus();
}
