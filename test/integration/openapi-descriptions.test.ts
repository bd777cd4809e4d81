import { startTestServer } from '../support/server';
import type { TestServer } from '../support/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, null);
});
afterAll(async () => {
  await t.stop();
});

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What an API user finds undocumented in the document: every schema property,
 * parameter and response header needs a description, and a property or
 * parameter with a short list of allowed values must say what each one means
 * (each value appears in its description).
 */
function undocumented(doc: Json): string[] {
  const out: string[] = [];
  const described = (node: Json) => typeof node.description === 'string' && node.description.trim() !== '';
  const checkValues = (where: string, node: Json, schema: Json) => {
    const values = Array.isArray(schema.enum) ? (schema.enum as (string | number | boolean | null)[]) : [];
    const textOf = (n: Json) => (typeof n.description === 'string' ? n.description : '');
    const text = `${textOf(node)} ${textOf(schema)}`;
    for (const v of values) {
      if (v === null) continue;
      if (!new RegExp(`(^|[^\\w])${String(v).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w])`).test(text))
        out.push(`${where}: value ${JSON.stringify(v)} is not explained`);
    }
  };
  const walk = (node: unknown, where: string) => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => walk(n, `${where}[${i}]`));
      return;
    }
    if (!isObject(node)) return;
    if (isObject(node.properties)) {
      for (const [name, prop] of Object.entries(node.properties)) {
        if (!isObject(prop)) continue;
        if (!described(prop)) out.push(`${where}.properties.${name}: no description`);
        else checkValues(`${where}.properties.${name}`, prop, prop);
      }
    }
    if (Array.isArray(node.parameters)) {
      for (const p of node.parameters as unknown[]) {
        if (!isObject(p) || typeof p.$ref === 'string') continue;
        const name = `${where}.parameters.${String(p.name)}`;
        if (!described(p)) out.push(`${name}: no description`);
        else checkValues(name, p, isObject(p.schema) ? p.schema : {});
      }
    }
    if (isObject(node.headers)) {
      for (const [name, h] of Object.entries(node.headers)) {
        if (isObject(h) && typeof h.$ref !== 'string' && !described(h))
          out.push(`${where}.headers.${name}: no description`);
      }
    }
    for (const [k, v] of Object.entries(node)) walk(v, `${where}.${k}`);
  };
  walk(doc, '#');
  // components.parameters are parameters too, though not in a `parameters` list.
  const params =
    isObject(doc.components) && isObject(doc.components.parameters) ? doc.components.parameters : {};
  for (const [name, p] of Object.entries(params)) {
    if (isObject(p) && !described(p)) out.push(`#/components/parameters/${name}: no description`);
  }
  return [...new Set(out)];
}

describe('OpenAPI descriptions', () => {
  it('describes every schema property, parameter and header, and what each listed value means', async () => {
    const doc = (await (await fetch(`${t.base}/openapi.json`)).json()) as Json;
    expect(undocumented(doc)).toEqual([]);
  });

  it('would notice a property without a description', () => {
    const doc = { components: { schemas: { X: { type: 'object', properties: { a: { type: 'string' } } } } } };
    expect(undocumented(doc)).toEqual(['#.components.schemas.X.properties.a: no description']);
    const coded = { properties: { s: { type: 'integer', enum: [1, 2], description: '1: yes.' } } };
    expect(undocumented(coded)).toEqual(['#.properties.s: value 2 is not explained']);
  });
});
