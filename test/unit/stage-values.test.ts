import { numberText } from '../../src/import/stage/values';

describe('numberText', () => {
  it('gives what String gives, for numbers seen before and numbers sharing a slot', () => {
    const values = [
      0,
      -0,
      1,
      -1,
      0.1,
      0.2,
      0.30000000000000004,
      1e21,
      1e-7,
      123456789.125,
      NaN,
      Infinity,
      -Infinity,
    ];
    // Every confidence score of three decimals, twice over (the second time from the cache), and more
    // numbers than the cache has slots, so that numbers meet in one slot and replace each other.
    for (let i = 0; i <= 1000; i++) values.push(i / 1000);
    for (let i = 0; i < 20_000; i++) values.push(Math.fround(i * 0.37) - 1234.5);
    // Numbers a billionth apart at most, and more of them than slots: a slot answers for its own number only.
    for (let i = 1; i <= 10_000; i++) values.push(i * 1e-13);
    const texts = [...values, ...values].map(numberText);
    expect(texts).toEqual([...values, ...values].map(String));
  });
});
