import { wholeBodyCoding } from '../../src/http/whole-body-compression';

describe('wholeBodyCoding', () => {
  it.each([
    [undefined, null],
    ['', null],
    ['identity', null],
    ['deflate', null],
    ['gzip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'br'],
    ['GZIP, BR', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['br;q=0.9, gzip;q=0.9', 'br'],
    ['gzip;q=0', null],
    ['*', 'br'],
    ['*;q=0.5, br;q=0', 'gzip'],
    ['gzip;q=0.3, identity;q=0.8', null],
    ['gzip;q=0.8, identity;q=0.3', 'gzip'],
    [' br ; q = 1 , gzip', 'br'],
  ])('%p -> %p', (header, expected) => {
    expect(wholeBodyCoding(header)).toBe(expected);
  });
});
