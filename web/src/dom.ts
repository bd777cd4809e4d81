import { webHref } from './links';

/** A small element builder: attributes by name, `on<event>` handlers, children as nodes or text. */
export type Child = Node | string | number | null | undefined | false | Child[];
type Props = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

/**
 * A link to a third-party page named in the data (a company's website, an evidence's source), opened
 * apart from the app; its text alone when the address is not an http(s) one (see {@link webHref}).
 */
export function outLink(address: string, text: string): Node {
  const href = webHref(address);
  if (href === null) return document.createTextNode(text);
  return h('a', { href, rel: 'noopener noreferrer', target: '_blank' }, text);
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else
      el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Sets the tab's title for the view drawn in `view`, unless that view was left meanwhile. */
export function setTitle(view: Element, title: string): void {
  if (view.isConnected) document.title = title;
}

export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A day written the way analysts read it, from an ISO instant. */
export function day(iso: string | null | undefined): string {
  return iso ? iso.slice(0, 10) : '—';
}

/**
 * A confidence as the percentage an analyst types into a filter: 0.93 as "93", 0.125 as "12.5"
 * (rounded past the float's noise, so 0.07 is not "7.000000000000001").
 */
export function percentOf(c: number): string {
  return String(Number((c * 100).toFixed(6)));
}

/**
 * The field a minimum confidence is typed into, as the percentage the lists and the map show: any value
 * from 0 to 100 (a step would make the browser refuse 93.5, and the form's other filters with it).
 * `c` is the API's 0 to 1; {@link confidenceOf} reads the field back.
 */
export function confidenceInput(id: string, c: number): HTMLInputElement {
  return h('input', {
    id,
    type: 'number',
    min: 0,
    max: 100,
    step: 'any',
    value: percentOf(c),
    class: 'short',
  });
}

/** Whether `s` is a calendar day written YYYY-MM-DD (2020-13-45 is not). */
export function isDay(s: string): boolean {
  const t = /^\d{4}-\d{2}-\d{2}$/.test(s) ? Date.parse(`${s}T00:00:00Z`) : NaN;
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === s;
}

/** A percentage typed into a filter as the confidence the API takes (0 for none or nonsense), 0 to 1. */
export function confidenceOf(typed: string): number {
  const v = Number(typed);
  return Number.isFinite(v) && v > 0 ? Math.min(v, 100) / 100 : 0;
}

export function pct(x: number | null | undefined): string {
  return x === null || x === undefined ? '—' : `${Math.round(x * 100)}%`;
}

/**
 * A control with its label (for the control's id), kept on one line: a form that wraps does so
 * between fields, not inside one.
 */
export function field(label: string, control: HTMLElement): HTMLElement {
  return h('span', { class: 'field' }, h('label', { for: control.id }, label), control);
}
