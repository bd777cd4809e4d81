import { countryCode, countryName } from '../../src/domain/countries';
import { ISO_COUNTRY_NAMES } from '../../src/domain/iso-country-names';

describe('countryCode', () => {
  it.each([
    ['CN', 'CN'],
    ['cn', 'CN'],
    ['CHN', 'CN'],
    ['China', 'CN'],
    ['South Korea', 'KR'],
    ['Korea, Republic of', 'KR'],
    ['KOR', 'KR'],
    ['Deutschland', 'DE'],
    ['germany', 'DE'],
    ['USA', 'US'],
    ['United States of America', 'US'],
    ['United States', 'US'],
    ['UK', 'GB'],
    ['United Kingdom', 'GB'],
    ['Türkiye', 'TR'],
    ['Turkey', 'TR'],
    ["Cote d'Ivoire", 'CI'],
    ['Côte d’Ivoire', 'CI'],
    ['Viet Nam', 'VN'],
    ['Vietnam', 'VN'],
    ['Russian Federation', 'RU'],
    ['Taiwan, Province of China', 'TW'],
    ['  japan ', 'JP'],
    ['United Kingdom of Great Britain and Northern Ireland', 'GB'],
    ['Bolivia, Plurinational State of', 'BO'],
    ['Iran, Islamic Republic of', 'IR'],
    ['Congo, The Democratic Republic of the', 'CD'],
    ['Congo', 'CG'],
    ['Netherlands, Kingdom of the', 'NL'],
    ['Palestine, State of', 'PS'],
    ['Tanzania, United Republic of', 'TZ'],
  ])('%j is %s', (value, code) => {
    expect(countryCode(value)).toBe(code);
  });

  it('never takes the north for the south', () => {
    expect(countryCode("Korea, Democratic People's Republic of")).not.toBe('KR');
    expect(countryCode('North Korea')).toBe('KP');
  });

  it.each(['', 'XX', 'XYZ', 'Atlantis', '!!'])('%j names no country', (value) => {
    expect(countryCode(value)).toBeNull();
  });
});

describe('countryName', () => {
  it.each([
    ['KR', 'Korea, Republic of'],
    ['NL', 'Netherlands, Kingdom of the'],
    ['CZ', 'Czechia'],
    ['IR', 'Iran, Islamic Republic of'],
    ['US', 'United States of America'],
    ['GB', 'United Kingdom of Great Britain and Northern Ireland'],
    ['TR', 'Türkiye'],
    ['VN', 'Viet Nam'],
    ['CD', 'Congo, Democratic Republic of the'],
  ])('names %s by its ISO 3166 short name, %j', (code, name) => {
    expect(countryName(code)).toBe(name);
  });

  it('gives every code a name that means that code again', () => {
    const codes = Object.keys(ISO_COUNTRY_NAMES);
    expect(codes).toHaveLength(249);
    expect(codes.filter((code) => countryCode(countryName(code)!) !== code)).toEqual([]);
  });

  it("names a code the library knows beyond the standard by the library's name", () => {
    expect(countryName('XK')).toBe('Kosovo');
    expect(countryCode('XK')).toBe('XK');
  });

  it('names no code that is not one', () => {
    expect(countryName('XX')).toBeNull();
    // Alpha-2 codes only, as countryCode gives them.
    expect(countryName('DEU')).toBeNull();
    expect(countryName('276')).toBeNull();
    expect(countryName('de')).toBeNull();
    expect(countryName('UK')).toBeNull();
  });
});
