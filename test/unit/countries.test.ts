import { countryCode } from '../../src/domain/countries';

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
  ])('%j is %s', (value, code) => {
    expect(countryCode(value)).toBe(code);
  });

  it.each(['', 'XX', 'XYZ', 'Atlantis', '!!'])('%j names no country', (value) => {
    expect(countryCode(value)).toBeNull();
  });
});
