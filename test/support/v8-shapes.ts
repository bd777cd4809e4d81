import v8 from 'node:v8';

/**
 * V8's own checks of an object's shape (its map), for tests of code written to keep shapes shared.
 * Natives syntax parses only in code compiled after the flag is set, hence functions made from text,
 * each once, when first asked for.
 */
function natives<F>(params: string[], body: string): () => F {
  let made: F | undefined;
  return () => {
    if (made === undefined) {
      v8.setFlagsFromString('--allow-natives-syntax');
      // eslint-disable-next-line @typescript-eslint/no-implied-eval -- see above
      made = new Function(...params, body) as F;
    }
    return made;
  };
}

const haveSameMap = natives<(a: object, b: object) => boolean>(['a', 'b'], 'return %HaveSameMap(a, b)');
const hasFastProperties = natives<(o: object) => boolean>(['o'], 'return %HasFastProperties(o)');

/** Whether `a` and `b` have the same map, so a property lookup cached for one serves the other. */
export function sameShape(a: object, b: object): boolean {
  return haveSameMap()(a, b);
}

/** Whether `o` keeps its properties in a map's fields rather than as a dictionary. */
export function fastProperties(o: object): boolean {
  return hasFastProperties()(o);
}
