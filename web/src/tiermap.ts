import cytoscape from 'cytoscape';
import type { Core, ElementDefinition, EventObject, SingularElementReturnValue } from 'cytoscape';
import { gql } from './api';
import { confidenceInput, confidenceOf, day, field, h, isDay, pct, replace, setTitle } from './dom';
import { navigate } from './router';

/** The most companies a map draws (the largest choice of "Companies at most"). */
const MAX_COMPANIES = 500;
/** Companies one above the other in a tier's column, and the distance between them in pixels. */
const ROWS = 22;
const ROW_H = 44;

interface MapNode {
  vid: string;
  name: string;
  country: string | null;
  tier: number;
  count_suppliers: number;
  count_customers: number;
  expanded: boolean;
  hidden: number;
}

interface MapEdge {
  relationship_id: string;
  supplier_id: string;
  customer_id: string;
  confidence_score: number;
  latest_relationship_date: string | null;
}

interface TierMap {
  root: string;
  nodes: MapNode[];
  edges: MapEdge[];
  truncated: boolean;
  hidden: number;
}

const QUERY = `query TierMap($vid: ID!, $direction: TierDirection, $tiers: Int, $c: Float, $date: Date, $per: Int, $max: Int) {
  tierMap(vid: $vid, direction: $direction, tiers: $tiers, min_confidence: $c, date: $date, per_node: $per, max_nodes: $max) {
    root truncated hidden
    nodes { vid name country tier count_suppliers count_customers expanded hidden }
    edges { relationship_id supplier_id customer_id confidence_score latest_relationship_date }
  }
}`;

/** Colour per tier; chosen to stay apart for the common colour-vision deficiencies. */
export const TIER_COLOURS = ['#1f2937', '#2563eb', '#0d9488', '#d97706'];
const TIER_NAMES = ['Root', 'Tier 1', 'Tier 2', 'Tier 3'];

interface Options {
  direction: 'supplier' | 'customer';
  tiers: number;
  c: number;
  date: string;
  per: number;
  max: number;
}

function readOptions(url: URL): Options {
  const p = url.searchParams;
  const num = (k: string, d: number, lo: number, hi: number) => {
    const v = Number(p.get(k));
    return p.has(k) && Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : d;
  };
  return {
    direction: p.get('direction') === 'customer' ? 'customer' : 'supplier',
    tiers: Math.round(num('tiers', 2, 1, 3)),
    c: num('confidence', 0, 0, 1),
    date: isDay(p.get('date') ?? '') ? p.get('date')! : '',
    per: Math.round(num('per', 10, 1, 50)),
    max: Math.round(num('max', 150, 2, MAX_COMPANIES)),
  };
}

function mapUrl(vid: string, o: Options): string {
  const p = new URLSearchParams({
    direction: o.direction,
    tiers: String(o.tiers),
    confidence: String(o.c),
    per: String(o.per),
    max: String(o.max),
  });
  if (o.date) p.set('date', o.date);
  return `/companies/${encodeURIComponent(vid)}/map?${p}`;
}

let current: Core | null = null;

/** `n` and the noun for it, one or many. */
const count = (n: number, one: string, many: string) => `${n.toLocaleString()} ${n === 1 ? one : many}`;

/** The id of the filter that applied the filters, to be focused again in the map drawn for them. */
let refocus: string | null = null;

/** Lets go of the map drawn last (its canvas, its listeners, its graph): when another page is drawn. */
export function releaseMap(): void {
  current?.destroy();
  current = null;
}

export async function tierMapView(main: HTMLElement, vid: string, url: URL): Promise<void> {
  const o = readOptions(url);

  // An address edited by hand may hold a value the list does not offer: it is shown, as drawn.
  const select = (id: string, value: string, options: [string, string][]) =>
    h(
      'select',
      { id, name: id },
      (options.some(([v]) => v === value) ? options : [...options, [value, value] as [string, string]]).map(
        ([v, label]) => h('option', { value: v, selected: v === value }, label),
      ),
    );
  const direction = select('map-direction', o.direction, [
    ['supplier', 'Suppliers (upstream)'],
    ['customer', 'Customers (downstream)'],
  ]);
  const tiers = select('map-tiers', String(o.tiers), [
    ['1', '1'],
    ['2', '2'],
    ['3', '3'],
  ]);
  // The address keeps the API's 0 to 1.
  const minC = confidenceInput('map-confidence', o.c);
  const since = h('input', { id: 'map-date', type: 'date', value: o.date });
  const per = select('map-per', String(o.per), [
    ['5', '5'],
    ['10', '10'],
    ['25', '25'],
    ['50', '50'],
  ]);
  const max = select('map-max', String(o.max), [
    ['50', '50'],
    ['150', '150'],
    ['300', '300'],
    ['500', '500'],
  ]);
  const title = h('h1', {}, 'Tier map');
  const summary = h('p', { id: 'map-summary', class: 'muted', 'aria-live': 'polite' }, 'Loading…');
  const canvas = h('div', { class: 'map-canvas' });
  const figure = h(
    'div',
    {
      role: 'figure',
      'aria-label': 'Tier map',
      'aria-describedby': 'map-summary',
      class: 'map',
      tabindex: 0,
    },
    canvas,
  );
  // The wheel scrolls the page over the map as elsewhere; with Ctrl (or ⌘), as a trackpad's pinch
  // sends it, it zooms the map. Stopped on its way down, before the map's own handler sees it.
  figure.addEventListener(
    'wheel',
    (e) => {
      if (!e.ctrlKey && !e.metaKey) e.stopPropagation();
    },
    { capture: true },
  );
  const tip = h('div', { class: 'tip', role: 'tooltip', hidden: true });
  const details = h(
    'aside',
    { class: 'card map-details', 'aria-label': 'Selected company' },
    h(
      'p',
      { class: 'muted' },
      matchMedia('(hover: none)').matches
        ? 'Tap a company for its details. Pinch to zoom.'
        : 'Hover over a company or relationship for its name and evidence date; click a company for its details. Ctrl and the wheel zoom.',
    ),
  );
  const listing = h('details', { class: 'card' });

  const form = h(
    'form',
    {
      class: 'filters map-filters',
      // A choice in a list applies at once; typed values (confidence, date) on Enter or Apply, so
      // that a date is not applied at its first digit.
      onchange: (e: Event) => {
        if (e.target instanceof HTMLSelectElement) form.requestSubmit();
      },
      onsubmit: (e: Event) => {
        e.preventDefault();
        // The redrawn form gives focus back to the control that applied it.
        refocus = document.activeElement?.id || null;
        navigate(
          mapUrl(vid, {
            direction: direction.value === 'customer' ? 'customer' : 'supplier',
            tiers: Number(tiers.value),
            c: confidenceOf(minC.value),
            date: since.value,
            per: Number(per.value),
            max: Number(max.value),
          }),
          true,
        );
      },
    },
    field('Direction', direction),
    field('Tiers', tiers),
    field('Min. confidence (%)', minC),
    field('Evidence after', since),
    field('Strongest per company', per),
    field('Companies at most', max),
    h('button', { type: 'submit', id: 'map-apply' }, 'Apply'),
  );
  const legend = h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    TIER_NAMES.slice(0, o.tiers + 1).map((name, i) => {
      const swatch = h('span', { class: 'swatch' });
      // Set on the element's style rather than as a style attribute, which the page's policy refuses.
      swatch.style.background = TIER_COLOURS[i] ?? '';
      return h('li', {}, swatch, name);
    }),
    h('li', {}, h('span', { class: 'line' }), 'Line width: confidence'),
    h('li', {}, h('span', { class: 'dot' }), 'Size: relationships'),
  );

  const backLink = h('a', { href: `/companies/${encodeURIComponent(vid)}` }, '← Company');
  replace(
    main,
    h('div', { class: 'company-head' }, h('div', {}, backLink, title), legend),
    form,
    h('div', { class: 'map-wrap' }, figure, details),
    summary,
    listing,
    tip,
  );
  if (refocus) document.getElementById(refocus)?.focus();
  refocus = null;

  const started = performance.now();
  const { tierMap: m } = await gql<{ tierMap: TierMap }>(QUERY, {
    vid,
    direction: o.direction,
    tiers: o.tiers,
    c: o.c,
    date: o.date || null,
    per: o.per,
    max: o.max,
  });
  // Left for another map (a filter changed) while this one was asked for: nothing to draw.
  if (!main.isConnected) return;
  const root = m.nodes.find((n) => n.vid === m.root)!;
  replace(title, `Tier map: ${root.name}`);
  replace(backLink, `← ${root.name}`);
  setTitle(main, `Tier map · ${root.name} · tiergraph`);

  // Latest evidence date of the relationships by which each company enters the map (those to a
  // company a tier nearer the root: as a supplier in a supplier map, a customer in a customer map),
  // not of those to its own counterparts further out.
  const latest = new Map<string, string>();
  const byVid = new Map(m.nodes.map((n) => [n.vid, n]));
  for (const e of m.edges) {
    const [v, nearer] =
      o.direction === 'supplier' ? [e.supplier_id, e.customer_id] : [e.customer_id, e.supplier_id];
    // Not a relationship to a company of the same tier or further out, which the map also draws.
    if (byVid.get(nearer)?.tier !== (byVid.get(v)?.tier ?? 0) - 1) continue;
    const d = e.latest_relationship_date;
    if (d && (latest.get(v) ?? '') < d) latest.set(v, d);
  }

  const elements: ElementDefinition[] = [
    ...layout(m.nodes, o.direction).map(({ n, x, y }) => ({
      group: 'nodes' as const,
      data: {
        id: n.vid,
        label: n.hidden > 0 ? `${short(n.name)} (+${n.hidden.toLocaleString()})` : short(n.name),
        colour: TIER_COLOURS[n.tier] ?? '#6b7280',
        // At most a row's height (ROW_H), so that companies one above the other do not overlap.
        size: 14 + Math.min(ROW_H - 18, Math.sqrt(n.count_suppliers + n.count_customers) * 4),
      },
      position: { x, y },
    })),
    ...m.edges.map((e) => ({
      group: 'edges' as const,
      data: {
        id: `r:${e.relationship_id}`,
        source: e.supplier_id,
        target: e.customer_id,
        width: 0.6 + e.confidence_score * 5,
        opacity: 0.25 + e.confidence_score * 0.6,
      },
    })),
  ];

  const cy = cytoscape({
    container: canvas,
    elements,
    layout: { name: 'preset', fit: true, padding: 30 },
    minZoom: 0.05,
    maxZoom: 3,
    style: [
      {
        selector: 'node',
        style: {
          'background-color': 'data(colour)',
          width: 'data(size)',
          height: 'data(size)',
          label: 'data(label)',
          'font-size': 11,
          'font-family': 'system-ui, sans-serif',
          color: '#111827',
          'text-valign': 'bottom',
          'text-margin-y': 3,
          'text-background-color': '#ffffff',
          'text-background-opacity': 0.75,
          'text-background-padding': '1px',
          'min-zoomed-font-size': 7,
          'border-width': 1.5,
          'border-color': '#ffffff',
        },
      },
      {
        selector: `node[id = "${m.root.replace(/"/g, '\\"')}"]`,
        style: { 'border-width': 4, 'border-color': '#f59e0b', 'font-weight': 'bold' },
      },
      {
        selector: 'edge',
        style: {
          width: 'data(width)',
          opacity: 'data(opacity)' as unknown as number,
          'line-color': '#64748b',
          'target-arrow-color': '#64748b',
          'target-arrow-shape': 'triangle',
          'arrow-scale': 0.7,
          'curve-style': 'straight',
        },
      },
      { selector: '.faded', style: { opacity: 0.12 } },
      { selector: 'node:selected', style: { 'border-color': '#dc2626', 'border-width': 4 } },
    ],
  });
  current = cy;

  const showTip = (html: HTMLElement[], x: number, y: number) => {
    replace(tip, html);
    const box = canvas.getBoundingClientRect();
    tip.hidden = false;
    // Beside the pointer, but inside the window: on a phone, or near the right edge, a tip placed
    // right of the pointer would leave the page wider than the screen.
    const margin = 8;
    const viewport = document.documentElement.clientWidth;
    const left = Math.max(margin, Math.min(box.left + x + 14, viewport - tip.offsetWidth - margin));
    tip.style.left = `${left + window.scrollX}px`;
    tip.style.top = `${box.top + window.scrollY + y + 14}px`;
  };
  cy.on('mouseover', 'node', (e) => {
    const n = byVid.get(target(e).id())!;
    showTip(
      [
        h('strong', {}, n.name),
        h('div', {}, [n.country, TIER_NAMES[n.tier]].filter(Boolean).join(' · ')),
        h('div', {}, `Latest evidence: ${day(latest.get(n.vid))}`),
        n.hidden > 0 ? h('div', {}, `${n.hidden.toLocaleString()} more not drawn`) : null,
      ].filter((x): x is HTMLElement => x !== null),
      e.renderedPosition.x,
      e.renderedPosition.y,
    );
  });
  cy.on('mouseover', 'edge', (e) => {
    const edge = m.edges.find((x) => `r:${x.relationship_id}` === target(e).id())!;
    showTip(
      [
        h('strong', {}, `${byVid.get(edge.supplier_id)?.name} → ${byVid.get(edge.customer_id)?.name}`),
        h(
          'div',
          {},
          `Confidence ${pct(edge.confidence_score)} · latest evidence ${day(edge.latest_relationship_date)}`,
        ),
      ],
      e.renderedPosition.x,
      e.renderedPosition.y,
    );
  });
  cy.on('mouseout', () => (tip.hidden = true));
  /** A company's details beside the map, its neighbourhood highlighted: from a click or the list. */
  /** `opener`: the list's button that asked, to which a keyboard user can go back. */
  const selectCompany = (n: MapNode, opener?: HTMLElement) => {
    cy.elements().addClass('faded');
    cy.getElementById(n.vid).closedNeighborhood().removeClass('faded');
    replace(
      details,
      h('h2', { tabindex: -1 }, n.name),
      h(
        'dl',
        { class: 'fields' },
        h('dt', {}, 'Tier'),
        h('dd', {}, TIER_NAMES[n.tier] ?? String(n.tier)),
        h('dt', {}, 'Country'),
        h('dd', {}, n.country ?? '—'),
        h('dt', {}, 'Suppliers'),
        h('dd', {}, n.count_suppliers.toLocaleString()),
        h('dt', {}, 'Customers'),
        h('dd', {}, n.count_customers.toLocaleString()),
        h('dt', {}, 'Latest evidence'),
        h('dd', {}, day(latest.get(n.vid))),
      ),
      n.hidden > 0
        ? h('p', { class: 'muted' }, `${n.hidden.toLocaleString()} counterparts not drawn here.`)
        : null,
      h(
        'p',
        { class: 'row' },
        h('a', { class: 'button', href: `/companies/${encodeURIComponent(n.vid)}` }, 'Open company'),
        n.vid !== m.root ? h('a', { class: 'button', href: mapUrl(n.vid, o) }, 'Recentre here') : null,
        opener ? h('button', { type: 'button', onclick: () => opener.focus() }, 'Back to the list') : null,
      ),
    );
  };
  cy.on('tap', 'node', (e) => selectCompany(byVid.get(target(e).id())!));
  cy.on('tap', (e) => {
    if (e.target === cy) cy.elements().removeClass('faded');
  });
  cy.on('dbltap', 'node', (e) => navigate(mapUrl(target(e).id(), o)));

  replace(
    summary,
    `${count(m.nodes.length, 'company', 'companies')} and ${count(m.edges.length, 'relationship', 'relationships')} drawn. `,
    m.hidden > 0
      ? o.c > 0 || o.date
        ? `${m.hidden.toLocaleString()} counterparts are not drawn: those the confidence or date filter leaves out, and those beyond the ${o.per} most confident of each company. `
        : `${m.hidden.toLocaleString()} counterparts are not drawn: each company shows its ${o.per} most confident. `
      : '',
    m.truncated
      ? o.max >= MAX_COMPANIES
        ? `The map stopped at ${o.max} companies, the most it draws; raise the minimum confidence, or take fewer of each company, to see further. `
        : `The map stopped at ${o.max} companies; raise the limit or the minimum confidence to see further. `
      : '',
    // A company with no relationship on this side draws as one lone circle: say why, and where to look.
    m.edges.length === 0 && !o.c && !o.date
      ? `${root.name} has no ${o.direction === 'supplier' ? 'suppliers' : 'customers'} in the data; try the other direction. `
      : '',
    'For the complete network, export the tier view from the company page.',
  );
  replace(
    listing,
    h('summary', {}, 'Companies in this map, by tier'),
    TIER_NAMES.slice(0, o.tiers + 1).map((name, t) => {
      const inTier = m.nodes.filter((n) => n.tier === t);
      return inTier.length === 0
        ? null
        : [
            // Under the page's h1: the listing's own headings are the next level down.
            h('h2', {}, `${name} (${inTier.length})`),
            h(
              'ul',
              { class: 'columns' },
              // Each with the details a click on the map shows: the map's content for the keyboard.
              inTier.map((n) =>
                h(
                  'li',
                  {},
                  h('a', { href: `/companies/${encodeURIComponent(n.vid)}` }, n.name),
                  ' ',
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'small',
                      'aria-label': `Details: ${n.name}`,
                      onclick: (e: Event) => {
                        selectCompany(n, e.currentTarget as HTMLElement);
                        details.scrollIntoView({ block: 'nearest' });
                        (details.querySelector('h2') as HTMLElement | null)?.focus();
                      },
                    },
                    'details',
                  ),
                ),
              ),
            ),
          ];
    }),
  );
  cy.one('render', () => {
    figure.dataset.nodes = String(cy.nodes().length);
    figure.dataset.edges = String(cy.edges().length);
    figure.dataset.ms = String(Math.round(performance.now() - started));
  });
}

/** The element an event happened on (the library types it loosely). */
function target(e: EventObject): SingularElementReturnValue {
  return e.target as SingularElementReturnValue;
}

function short(name: string): string {
  return name.length > 28 ? `${name.slice(0, 26)}…` : name;
}

/**
 * Tiers as columns: the root at one side, suppliers to its left (goods flow left
 * to right) or customers to its right. A long tier wraps into several columns.
 */
function layout(
  nodes: MapNode[],
  direction: 'supplier' | 'customer',
): { n: MapNode; x: number; y: number }[] {
  const SUB_W = 150;
  const sign = direction === 'supplier' ? -1 : 1;
  const out: { n: MapNode; x: number; y: number }[] = [];
  let x = 0;
  const maxTier = Math.max(...nodes.map((n) => n.tier));
  for (let t = 0; t <= maxTier; t++) {
    const inTier = nodes.filter((n) => n.tier === t);
    const cols = Math.max(1, Math.ceil(inTier.length / ROWS));
    const rows = Math.ceil(inTier.length / cols);
    inTier.forEach((n, i) => {
      const col = Math.floor(i / rows);
      const row = i % rows;
      out.push({
        n,
        x: sign * (x + col * SUB_W),
        y: (row - (rows - 1) / 2) * ROW_H + (col % 2) * (ROW_H / 2),
      });
    });
    x += (cols - 1) * SUB_W + 260;
  }
  return out;
}
