/**
 * The actor's transition table (src/jobs/job-states.ts): every legal move is
 * taken, every illegal one (and every move from a state the caller did not
 * expect to leave) is refused with `illegal_transition`.
 */
import { describe, expect, test } from 'bun:test';
import { isServiceError } from '../../src/errors';
import { isFinal, JOB_STATES, JOB_TRANSITIONS, transition, type JobState } from '../../src/jobs/job-states';

const ALL = Object.values(JOB_STATES) as JobState[];
const LEGAL: [JobState, JobState][] = [
  ['validating', 'reserving'],
  ['validating', 'failed'],
  ['reserving', 'probing'],
  ['reserving', 'failed'],
  ['probing', 'validating_urls'],
  ['probing', 'writing'],
  ['probing', 'failed'],
  ['validating_urls', 'writing'],
  ['validating_urls', 'failed'],
  ['writing', 'completed'],
  ['writing', 'failed'],
];
const isLegal = (from: JobState, to: JobState) => LEGAL.some(([f, t]) => f === from && t === to);

describe('job state transitions', () => {
  test('the table is exactly the documented graph', () => {
    const table: [JobState, JobState][] = [];
    for (const from of ALL) for (const to of JOB_TRANSITIONS[from]) table.push([from, to]);
    expect(table.sort()).toEqual([...LEGAL].sort());
  });

  test('every one of the 49 (from, to) pairs: legal ones move, illegal ones are refused', () => {
    let refused = 0;
    for (const from of ALL) {
      for (const to of ALL) {
        if (isLegal(from, to)) {
          expect(transition(from, [from], to)).toBe(to);
        } else {
          let err: unknown = null;
          try {
            transition(from, [from], to);
          } catch (e) {
            err = e;
          }
          expect(isServiceError(err, 'illegal_transition')).toBe(true);
          refused++;
        }
      }
    }
    expect(refused).toBe(49 - LEGAL.length);
  });

  test('a legal move from a state the caller did not expect to leave is refused', () => {
    for (const [from, to] of LEGAL) {
      const others = ALL.filter((s) => s !== from);
      expect(() => transition(from, others, to)).toThrow(/illegal|expected/);
    }
  });

  test('completed and failed are final', () => {
    expect(ALL.filter(isFinal).sort()).toEqual(['completed', 'failed']);
  });
});
