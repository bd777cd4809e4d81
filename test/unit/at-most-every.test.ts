import { atMostEvery } from '../../src/logger';

describe('atMostEvery', () => {
  it('passes the first call of each period on, with the number dropped since the last', () => {
    let t = 0;
    const seen: [number, string][] = [];
    const say = atMostEvery(
      60_000,
      (dropped, what: string) => seen.push([dropped, what]),
      () => t,
    );
    say('a');
    t = 1_000;
    say('b');
    t = 59_999;
    say('c');
    t = 60_000;
    say('d');
    t = 200_000;
    say('e');
    expect(seen).toEqual([
      [0, 'a'],
      [2, 'd'],
      [0, 'e'],
    ]);
  });
});
