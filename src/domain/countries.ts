import countries from 'i18n-iso-countries';
import de from 'i18n-iso-countries/langs/de.json';
import en from 'i18n-iso-countries/langs/en.json';
import es from 'i18n-iso-countries/langs/es.json';
import fr from 'i18n-iso-countries/langs/fr.json';
import it from 'i18n-iso-countries/langs/it.json';
import nl from 'i18n-iso-countries/langs/nl.json';
import pt from 'i18n-iso-countries/langs/pt.json';
import { ISO_COUNTRY_NAMES } from './iso-country-names';

/**
 * Spelling-insensitive key of a country name: accents, case, punctuation and spaces dropped, so "Viet
 * Nam", "Vietnam", "Côte d’Ivoire" and "Cote d'Ivoire" meet.
 */
function keyOf(value: string): string {
  return value
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');
}

/**
 * Every name the library knows, keyed, after the ISO short names (which therefore always mean their own
 * country). English goes first and the other languages only fill keys English left free, so a foreign
 * spelling can never take over an English name.
 */
function buildNames(): Map<string, string> {
  const names = new Map<string, string>();
  for (const [code, name] of Object.entries(ISO_COUNTRY_NAMES)) names.set(keyOf(name), code);
  for (const locale of [en, de, fr, es, it, nl, pt]) {
    countries.registerLocale(locale);
    for (const [code, value] of Object.entries(countries.getNames(locale.locale, { select: 'all' }))) {
      for (const name of value) {
        const key = keyOf(name);
        if (key !== '' && !names.has(key)) names.set(key, code);
      }
    }
  }
  return names;
}

const NAMES = buildNames();

/**
 * The ISO 3166-1 alpha-2 code a country value means, or null when it names no country. Accepts alpha-2
 * and alpha-3 codes, the long-form name ("Korea, Republic of"), common English short names ("South
 * Korea") and names in a few other major languages ("Deutschland"), in any case, with or without accents.
 */
export function countryCode(value: string): string | null {
  const v = value.trim();
  if (/^[A-Za-z]{2}$/.test(v)) {
    const code = v.toUpperCase();
    // UK is the code ISO 3166 keeps exceptionally reserved for the United Kingdom at its request.
    if (code === 'UK') return 'GB';
    return countries.isValid(code) ? code : null;
  }
  if (/^[A-Za-z]{3}$/.test(v)) {
    const code = countries.alpha3ToAlpha2(v.toUpperCase());
    if (code) return code;
  }
  for (const form of nameForms(v)) {
    const key = keyOf(form);
    const code = key === '' ? undefined : NAMES.get(key);
    if (code) return code;
  }
  return null;
}

/**
 * Ways of writing the same name, tried in order: as given; ISO's inverted long form turned round
 * ("Congo, The Democratic Republic of the" is "Democratic Republic of the Congo"); the short name
 * before the comma ("Bolivia, Plurinational State of"); the name before " of " ("United Kingdom of
 * Great Britain and Northern Ireland"). The looser forms come last so they never win over an exact name.
 */
function nameForms(value: string): string[] {
  const forms = [value];
  const comma = value.indexOf(',');
  if (comma > 0) {
    const head = value.slice(0, comma).trim();
    const tail = value.slice(comma + 1).trim();
    const turned = `${tail} ${head}`;
    forms.push(turned, turned.replace(/^the\s+/i, ''), head);
  }
  const of = value.search(/\sof\s/i);
  if (of > 0 && comma < 0) forms.push(value.slice(0, of));
  return forms;
}

/**
 * The ISO 3166-1 English short name of an alpha-2 code ("Korea, Republic of"); for a code the library
 * knows beyond the standard's (XK, Kosovo), its English name; else null.
 */
export function countryName(code: string): string | null {
  if (!/^[A-Z]{2}$/.test(code)) return null;
  return ISO_COUNTRY_NAMES[code] ?? countries.getName(code, 'en', { select: 'official' }) ?? null;
}
