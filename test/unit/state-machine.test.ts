/**
 * The transition helper (src/state-machine.ts): a move in the table from the
 * state the caller expected moves; anything else throws illegal_transition
 * and leaves the state where it was.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { isServiceError } from '../../src/errors';
import { LEAF_ERROR_CODES } from '../../src/error-codes';
import { isFinalState, StateMachine, transition, transitionTable } from '../../src/state-machine';

const { ILLEGAL_TRANSITION } = LEAF_ERROR_CODES;

type S = 'a' | 'b' | 'c' | 'end';
const TABLE = transitionTable<S>({ a: ['b', 'end'], b: ['a', 'c'], c: ['end'], end: [] });
const STATES: S[] = ['a', 'b', 'c', 'end'];

function refusal(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return null;
}

describe('transition', () => {
  test('a move in the table from the expected state returns the new state', () => {
    expect(transition('m', TABLE, 'a', 'a', 'b')).toBe('b');
    expect(transition('m', TABLE, 'b', ['a', 'b'], 'c')).toBe('c');
  });

  test('a move not in the table is refused, naming the machine and the move', () => {
    const err = refusal(() => transition('thing', TABLE, 'a', 'a', 'c'));
    expect(isServiceError(err, ILLEGAL_TRANSITION)).toBe(true);
    expect((err as Error).message).toBe('thing: a -> c (expected to leave a)');
  });

  test('a move in the table from a state the caller did not expect is refused', () => {
    const err = refusal(() => transition('thing', TABLE, 'a', ['b', 'c'], 'end'));
    expect(isServiceError(err, ILLEGAL_TRANSITION)).toBe(true);
    expect((err as Error).message).toBe('thing: a -> end (expected to leave b | c)');
  });

  test('nothing leaves a final state', () => {
    for (const to of STATES) expect(isServiceError(refusal(() => transition('m', TABLE, 'end', 'end', to)), ILLEGAL_TRANSITION)).toBe(true);
    expect(STATES.filter((s) => isFinalState(TABLE, s))).toEqual(['end']);
  });

  test('the table is frozen: no move can be added at run time', () => {
    expect(Object.isFrozen(TABLE)).toBe(true);
    expect(Object.isFrozen(TABLE.a)).toBe(true);
    expect(() => (TABLE.a as S[]).push('c')).toThrow();
  });
});

describe('StateMachine', () => {
  test('starts in its initial state and refuses an unknown one', () => {
    expect(new StateMachine('m', TABLE, 'b').state).toBe('b');
    expect(isServiceError(refusal(() => new StateMachine('m', TABLE, 'zz' as S)), ILLEGAL_TRANSITION)).toBe(true);
  });

  test('any sequence of moves: each is taken exactly when it is in the table from the expected state, and a refused one changes nothing', () => {
    const move = fc.record({ from: fc.subarray(STATES, { minLength: 1 }), to: fc.constantFrom(...STATES) });
    fc.assert(
      fc.property(fc.constantFrom(...STATES), fc.array(move, { maxLength: 30 }), (initial, moves) => {
        const m = new StateMachine('m', TABLE, initial);
        let model: S = initial;
        for (const { from, to } of moves) {
          const legal = from.includes(model) && TABLE[model].includes(to);
          const err = refusal(() => m.move(from, to));
          if (legal) {
            expect(err).toBeNull();
            model = to;
          } else {
            expect(isServiceError(err, ILLEGAL_TRANSITION)).toBe(true);
          }
          expect(m.state).toBe(model);
          expect(m.final).toBe(model === 'end');
        }
      }),
    );
  });
});
