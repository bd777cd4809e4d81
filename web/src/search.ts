import { ApiError, gql, KeyRefused, rest } from './api';
import { field, h, replace, setTitle } from './dom';
import { navigate } from './router';

interface Suggestion {
  vid: string;
  name: string;
  country: string | null;
}

interface SearchHit {
  vid: string;
  name: string;
  domiciled_country: string | null;
  search_similarity: number | null;
  count_suppliers: number;
  count_customers: number;
}

const SEARCH = `query Search($name: String, $country: String, $subs: Boolean, $limit: Int, $offset: Int, $min: Float) {
  companies(name: $name, country: $country, include_subsidiaries: $subs, limit: $limit, offset: $offset, min_similarity: $min) {
    has_more
    results { vid name domiciled_country search_similarity count_suppliers count_customers }
  }
}`;

const PAGE = 20;
/**
 * Whether the server has the suggest route, read once from its OpenAPI document:
 * asking the route itself and falling back on a 404 would log an error in the
 * browser's console on every server without it.
 */
let suggestRoute: Promise<boolean> | null = null;

function hasSuggestRoute(): Promise<boolean> {
  suggestRoute ??= fetch('/openapi.json')
    .then(async (r) => {
      // A server error may pass; a refusal (a proxy's 404, say) stands for the visit.
      if (r.status >= 500) throw new Error(`openapi.json answered ${r.status}`);
      if (!r.ok) return false;
      const doc = (await r.json()) as { paths?: Record<string, unknown> };
      return Object.keys(doc.paths ?? {}).some((p) => p.replace(/\/$/, '') === '/v1/companies/suggest');
    })
    .catch(() => {
      // Not known (the server out of reach, say): asked again next time rather than taken as no.
      suggestRoute = null;
      return false;
    });
  return suggestRoute;
}

/**
 * Suggestions come from the suggest route where the server has one, and from
 * a small name search otherwise; the answer is read in either shape.
 */
async function suggest(q: string, country: string, subs: boolean): Promise<Suggestion[]> {
  // The route filters by nothing but subsidiaries: with a country given, the search suggests, so
  // that every suggestion keeps to it as the results will.
  if (!country && (await hasSuggestRoute())) {
    // `q`, and subsidiaries when asked for.
    const params = new URLSearchParams({ q, ...(subs ? { include_subsidiaries: 'true' } : {}) });
    try {
      const body = await rest<unknown>(`/v1/companies/suggest/?${params}`);
      const rows = Array.isArray(body) ? body : ((body as { results?: unknown[] }).results ?? []);
      return (rows as Record<string, unknown>[]).map((r) => ({
        vid: String(r.vid),
        name: String(r.name),
        country: (r.country ?? r.domiciled_country ?? null) as string | null,
      }));
    } catch (e) {
      // A route that refuses the filters still leaves the search to suggest from.
      if (!(e instanceof ApiError) || e.status >= 500 || e.status === 401 || e.status === 403) throw e;
    }
  }
  const data = await gql<{ companies: { results: SearchHit[] } }>(SEARCH, {
    name: q,
    country: country || null,
    subs,
    limit: 6,
    offset: 0,
    // A few typed letters share few trigrams with a long name: suggest loosely, rank by similarity.
    min: 0.1,
  });
  return data.companies.results.map((c) => ({ vid: c.vid, name: c.name, country: c.domiciled_country }));
}

export async function searchView(main: HTMLElement, url: URL): Promise<void> {
  // Trimmed as the form trims them: an address edited by hand to `?q=%20` is no search by name.
  const q = (url.searchParams.get('q') ?? '').trim();
  const country = (url.searchParams.get('country') ?? '').trim();
  const subs = url.searchParams.get('subsidiaries') === 'true';
  // An offset edited by hand into something the server refuses starts at the first page.
  const offset = Math.max(0, Math.floor(Number(url.searchParams.get('offset') ?? '0') || 0));
  setTitle(main, q ? `${q} · search · tiergraph` : 'Search · tiergraph');

  const box = h('input', {
    type: 'search',
    id: 'search-box',
    name: 'q',
    'aria-label': 'Search companies',
    placeholder: 'Company name, e.g. acme',
    value: q,
    // The longest name the server searches for.
    maxlength: 200,
    autocomplete: 'off',
    'aria-controls': 'suggestions',
    'aria-describedby': 'suggestions-hint',
  });
  const countryBox = h('input', {
    id: 'country',
    name: 'country',
    value: country,
    placeholder: 'e.g. Germany',
  });
  const subsBox = h('input', { id: 'subs', type: 'checkbox', name: 'subsidiaries', checked: subs });
  const suggestions = h('ul', {
    id: 'suggestions',
    class: 'suggestions',
    'aria-label': 'Suggestions',
    hidden: true,
  });
  // Said to screen readers, which see no list appear: how many suggestions there are and how to reach them.
  const hint = h('p', { id: 'suggestions-hint', class: 'sr-only' }, 'Suggestions appear as you type.');
  const status = h('p', { id: 'suggestions-status', class: 'sr-only', role: 'status' });
  const showSuggestions = (count: number) => {
    suggestions.hidden = count === 0;
    status.textContent =
      count === 0
        ? ''
        : `${count} ${count === 1 ? 'suggestion' : 'suggestions'}: press the down arrow to reach ${count === 1 ? 'it' : 'them'}, Escape to close.`;
  };
  // Not a live region: a screen reader would read the whole table out at every search. A status line
  // says what came of it instead.
  const results = h('section', { class: 'results', 'aria-label': 'Results' });
  const resultsStatus = h('p', { class: 'sr-only', role: 'status' });
  const searchbar = h(
    'div',
    { class: 'searchbar' },
    box,
    h('button', { type: 'submit' }, 'Search'),
    suggestions,
    hint,
    status,
  );

  let timer = 0;
  let asked = 0;
  box.addEventListener('input', () => {
    window.clearTimeout(timer);
    const text = box.value.trim();
    if (text.length < 2) {
      showSuggestions(0);
      return;
    }
    timer = window.setTimeout(() => {
      const mine = ++asked;
      suggest(text, countryBox.value.trim(), subsBox.checked).then(
        (rows) => {
          if (mine !== asked) return;
          replace(
            suggestions,
            rows.map((s) =>
              h(
                'li',
                {},
                // The whole row leads to the company, its country too.
                h(
                  'a',
                  { href: `/companies/${encodeURIComponent(s.vid)}` },
                  s.name,
                  s.country ? h('span', { class: 'muted' }, ` · ${s.country}`) : null,
                ),
              ),
            ),
          );
          showSuggestions(rows.length);
        },
        () => {
          showSuggestions(0);
        },
      );
    }, 150);
  });
  // Suggestions put away, and any still on their way dropped: for other filters (typing in the name
  // box again asks with the new ones), or when focus leaves them (below).
  const putAway = () => {
    window.clearTimeout(timer);
    asked++;
    showSuggestions(0);
  };
  countryBox.addEventListener('input', putAway);
  subsBox.addEventListener('change', putAway);
  // The keyboard moves from the box into the suggestions and between them; Escape goes back.
  const links = () => [...suggestions.querySelectorAll('a')];
  box.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') showSuggestions(0);
    if (e.key === 'ArrowDown' && !suggestions.hidden && links().length > 0) {
      e.preventDefault();
      links()[0]!.focus();
    }
  });
  suggestions.addEventListener('keydown', (e) => {
    const all = links();
    const at = all.indexOf(document.activeElement as HTMLAnchorElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = at + (e.key === 'ArrowDown' ? 1 : -1);
      if (next < 0) box.focus();
      else all[Math.min(next, all.length - 1)]?.focus();
    } else if (e.key === 'Escape') {
      showSuggestions(0);
      box.focus();
    }
  });
  // Focus leaving for another field (Tab onwards from the box or from the last suggestion) closes
  // them, as a combobox's list closes: open, they would cover the fields below. Focus going nowhere
  // (a click on the page, or on a link a browser does not focus) is left to the click.
  const focusLeft = (e: FocusEvent) => {
    const to = e.relatedTarget;
    if (to instanceof Node && to !== box && !suggestions.contains(to)) putAway();
  };
  box.addEventListener('focusout', focusLeft);
  suggestions.addEventListener('focusout', focusLeft);
  // A click elsewhere closes them.
  const outside = (e: MouseEvent) => {
    if (!suggestions.isConnected) return document.removeEventListener('click', outside);
    if (!(e.target instanceof Node) || !searchbar.contains(e.target)) showSuggestions(0);
  };
  document.addEventListener('click', outside);

  const form = h(
    'form',
    {
      role: 'search',
      class: 'card search',
      onsubmit: (e: Event) => {
        e.preventDefault();
        const p = new URLSearchParams();
        if (box.value.trim()) p.set('q', box.value.trim());
        if (countryBox.value.trim()) p.set('country', countryBox.value.trim());
        if (subsBox.checked) p.set('subsidiaries', 'true');
        navigate(`/?${p}`);
      },
    },
    h('h1', {}, 'Find a company'),
    searchbar,
    h(
      'div',
      { class: 'filters' },
      field('Country', countryBox),
      h('label', { class: 'check' }, subsBox, ' Include subsidiaries'),
    ),
  );
  replace(main, form, resultsStatus, results);
  if (!q && !country) {
    box.focus();
    replace(
      results,
      h(
        'p',
        { class: 'muted' },
        'Type a name to see suggestions; press Enter for ranked results with their counts.',
      ),
    );
    return;
  }

  const show = async (): Promise<void> => {
    replace(results, h('p', { class: 'muted' }, 'Searching…'));
    const ask = () =>
      gql<{ companies: { has_more: boolean; results: SearchHit[] } }>(SEARCH, {
        name: q || null,
        country: country || null,
        subs,
        limit: PAGE,
        offset,
      });
    let data: Awaited<ReturnType<typeof ask>>;
    for (;;) {
      try {
        data = await ask();
        break;
      } catch (e) {
        // Criteria the server refuses (an offset past its limit, say) are told under the form, which
        // stays to correct them; a refused key and the unforeseen go to the page.
        if (e instanceof ApiError && e.status === 400) {
          replace(results, h('p', { role: 'alert', class: 'error' }, e.message));
          return;
        }
        if (e instanceof KeyRefused || !(e instanceof ApiError)) throw e;
        // The server out of reach or failing: said under the form, which stays as typed, with a way
        // to ask again.
        if (e.status !== 503 || e.retryAfterS === null) {
          const again = () =>
            show().catch((err: Error) =>
              replace(results, h('p', { role: 'alert', class: 'error' }, err.message)),
            );
          replace(
            results,
            h('p', { role: 'alert', class: 'error' }, e.message),
            h('button', { type: 'button', class: 'small', onclick: () => void again() }, 'Try again'),
          );
          return;
        }
        // A server that has just started answers searches once its search index is built, and says when
        // to ask again: the page says so and asks again then, while it is still on screen.
        replace(
          results,
          h(
            'p',
            { role: 'status', class: 'muted' },
            `The server has just started and is still building its search index. This page searches again in ${e.retryAfterS} s.`,
          ),
        );
        // At least a second apart, whatever the header says.
        await new Promise((resolve) => window.setTimeout(resolve, Math.max(1, e.retryAfterS!) * 1000));
        if (!results.isConnected) return;
      }
    }
    const page = data.companies;
    const pageLink = (to: number, label: string) => {
      const p = new URLSearchParams(url.searchParams);
      p.set('offset', String(to));
      return h('a', { href: `/?${p}`, class: 'button' }, label);
    };
    /** The line above the results: what they are ranked by, or why there are none. */
    const lead = (): HTMLElement => {
      if (page.results.length > 0 && q)
        return h(
          'p',
          { class: 'muted' },
          'Ranked by relevance: how well the words of a name match, and how connected the company is. ',
          'Similarity is the trigram similarity of the name alone.',
        );
      if (page.results.length > 0)
        return h('p', { class: 'muted' }, 'Companies of this country, the most connected first.');
      if (offset > 0) return h('p', {}, 'No more results. ', pageLink(0, 'Back to the first page'));
      // A country the server does not know matches nothing, which looks like no company at all.
      if (country)
        return h(
          'p',
          {},
          `No company matches in “${country}”. Try fewer letters or include subsidiaries, and check the country: it is matched by its ISO 3166 code or English name (KR, KOR, “Korea, Republic of” or “South Korea”), and a name it does not know matches no company.`,
        );
      return h('p', {}, 'No company matches. Try fewer letters, another country, or include subsidiaries.');
    };
    resultsStatus.textContent =
      page.results.length === 0
        ? offset > 0
          ? 'No more results.'
          : 'No company matches.'
        : `Results ${offset + 1} to ${offset + page.results.length}${page.has_more ? ', more on the next page' : ''}.`;
    replace(
      results,
      lead(),
      page.results.length === 0
        ? null
        : h(
            'table',
            { class: 'list hits' },
            h(
              'thead',
              {},
              h(
                'tr',
                {},
                h('th', { scope: 'col' }, 'Company'),
                h('th', { scope: 'col' }, 'Country'),
                h('th', { scope: 'col', class: 'num' }, 'Similarity'),
                h('th', { scope: 'col', class: 'num' }, 'Suppliers'),
                h('th', { scope: 'col', class: 'num' }, 'Customers'),
              ),
            ),
            h(
              'tbody',
              {},
              page.results.map((c) =>
                h(
                  'tr',
                  {},
                  h('td', {}, h('a', { href: `/companies/${encodeURIComponent(c.vid)}` }, c.name)),
                  h('td', {}, c.domiciled_country ?? '—'),
                  h(
                    'td',
                    { class: 'num' },
                    c.search_similarity === null ? '—' : c.search_similarity.toFixed(2),
                  ),
                  h('td', { class: 'num' }, c.count_suppliers.toLocaleString()),
                  h('td', { class: 'num' }, c.count_customers.toLocaleString()),
                ),
              ),
            ),
          ),
      h(
        'nav',
        { class: 'pager', 'aria-label': 'Result pages' },
        offset > 0 ? pageLink(Math.max(0, offset - PAGE), 'Previous') : null,
        page.has_more ? pageLink(offset + PAGE, 'Next') : null,
      ),
    );
  };
  await show();
}
