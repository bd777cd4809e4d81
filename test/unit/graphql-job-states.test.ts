import { getNamedType, getNullableType, isEnumType, isObjectType } from 'graphql';
import { buildSchema } from '../../src/graphql/schema';
import { LIFE_CYCLE_STATES, RESULT_STATES } from '../../src/jobs/run-store';

/**
 * A run's states are enums in the schema, so the explorer and typed clients know every value; they
 * are the run store's own, no more and no fewer.
 */
describe("the GraphQL schema's run states", () => {
  const schema = buildSchema();
  const jobState = schema.getType('JobState');
  const fieldEnum = (field: string) => {
    if (!isObjectType(jobState)) throw new Error('JobState is not an object type');
    const type = jobState.getFields()[field]!.type;
    const named = getNamedType(type);
    return { named, required: getNullableType(type) !== type };
  };

  it('gives life_cycle_state as a required enum of the stored states', () => {
    const { named, required } = fieldEnum('life_cycle_state');
    expect(isEnumType(named) && named.getValues().map((v) => v.value as string)).toEqual([
      ...LIFE_CYCLE_STATES,
    ]);
    expect(required).toBe(true);
  });

  it('gives result_state as an optional enum of the stored results, each value described', () => {
    const { named, required } = fieldEnum('result_state');
    if (!isEnumType(named)) throw new Error(`result_state is ${named.name}, not an enum`);
    expect(named.getValues().map((v) => v.value as string)).toEqual([...RESULT_STATES]);
    expect(named.getValues().filter((v) => !v.description)).toEqual([]);
    expect(required).toBe(false);
  });
});
