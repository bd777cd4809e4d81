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
