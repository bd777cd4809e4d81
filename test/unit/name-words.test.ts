import { acronymsOf, editDistanceWithin, significantWords, wordsOf } from '../../src/search/name-words';

describe('name words', () => {
  it('folds accents and case and splits on everything else', () => {
    expect(wordsOf('Müller & Söhne GmbH, Co.KG')).toEqual(['muller', 'sohne', 'gmbh', 'co', 'kg']);
  });

  it('leaves legal forms out of the significant words unless nothing else is left', () => {
    expect(significantWords(wordsOf('Robert Bosch GmbH'))).toEqual(['robert', 'bosch']);
    expect(significantWords(wordsOf('Co Ltd'))).toEqual(['co', 'ltd']);
  });

  it.each([
    ['Taiwan Semiconductor Manufacturing Co Ltd', ['tsm', 'tsmc']],
    ['International Business Machines Corp', ['ibm', 'ibmc']],
    ['Bank of America Corp', ['ba', 'bac', 'boa']],
    ['Bayerische Motoren Werke AG', ['bmw', 'bmwa']],
    ['Siemens AG', []],
  ])('derives the acronyms of %j', (name, acronyms) => {
    expect(acronymsOf(wordsOf(name)).sort()).toEqual(acronyms);
  });

  it.each([
    ['samsung', 'samsnug', 1],
    ['samsung', 'samsunng', 1],
    ['samsung', 'samsng', 1],
    ['samsung', 'samsong', 1],
    ['samsung', 'smasnug', 2],
    ['samsung', 'boeing', 2],
  ])('edit distance of %s and %s within 1 is %d (max + 1 beyond)', (a, b, d) => {
    expect(editDistanceWithin(a, b, 1)).toBe(d);
  });
});
