/**
 * The actor's transition table (src/jobs/job-states.ts), checked for what the
 * job's life needs rather than against a copy of itself: every state is
 * reached, every job ends (no cycle), a failure lands in `failed` from any
 * state that works, a job completes only through `writing`, progress never
 * goes back; and `transition` takes exactly the table's moves, from a state
 * the caller expects to leave, refusing the rest with `illegal_transition`.
 */
import { describe, expect, test } from 'bun:test';
import { isServiceError } from '../../src/errors';
import { isFinal, JOB_STATES, JOB_TRANSITIONS, PHASE_OF, transition, type JobState } from '../../src/jobs/job-states';
import { PROGRESS_PHASES } from '../../src/jobs/progress';

const ALL = Object.values(JOB_STATES) as JobState[];
const moves = (from: JobState): readonly JobState[] => JOB_TRANSITIONS[from];

/** The states reachable from `from` in one or more moves. */
function reachable(from: JobState): Set<JobState> {
  const seen = new Set<JobState>();
  const todo = [...moves(from)];
  for (let s = todo.pop(); s !== undefined; s = todo.pop()) {
    if (seen.has(s)) continue;
    seen.add(s);
    todo.push(...moves(s));
  }
  return seen;
}

describe('the graph a job lives on', () => {
  test('every state is reached from validating, where a job starts', () => {
    expect([...reachable(JOB_STATES.VALIDATING), JOB_STATES.VALIDATING].sort()).toEqual([...ALL].sort());
  });

  test('every job ends: no state reaches itself again, and every state reaches a final one', () => {
    for (const s of ALL) {
      expect(reachable(s).has(s), s).toBe(false);
      expect(isFinal(s) || [...reachable(s)].some(isFinal), s).toBe(true);
    }
  });

  test('the final states are completed and failed, and they move nowhere', () => {
    expect(ALL.filter(isFinal).sort()).toEqual([JOB_STATES.COMPLETED, JOB_STATES.FAILED]);
    for (const s of ALL.filter(isFinal)) expect(moves(s)).toEqual([]);
  });

  test('any state that works can fail at once (an error, a failed shard, a cancel lands in failed)', () => {
    for (const s of ALL.filter((x) => !isFinal(x))) expect(moves(s), s).toContain(JOB_STATES.FAILED);
  });

  test('a job completes only from writing (its result file is finished first), and writing cannot be skipped', () => {
    for (const s of ALL) expect(moves(s).includes(JOB_STATES.COMPLETED), s).toBe(s === JOB_STATES.WRITING);
    // without the writing state, completed is out of reach
    const withoutWriting = (from: JobState, seen = new Set<JobState>()): boolean =>
      moves(from).some((t) => t === JOB_STATES.COMPLETED || (t !== JOB_STATES.WRITING && !seen.has(t) && (seen.add(t), withoutWriting(t, seen))));
    expect(withoutWriting(JOB_STATES.VALIDATING)).toBe(false);
  });

  test('progress never goes back: along every move the reported phase stays or advances', () => {
    const order = Object.values(PROGRESS_PHASES) as string[];
    for (const from of ALL) {
      for (const to of moves(from)) {
        if (to === JOB_STATES.FAILED) continue; // failing ends the job from any phase
        expect(order.indexOf(PHASE_OF[to]), `${from} -> ${to}`).toBeGreaterThan(order.indexOf(PHASE_OF[from]));
      }
    }
  });
});

describe('transition', () => {
  test('every one of the 49 (from, to) pairs: the table\'s moves are taken, every other one is refused', () => {
    let taken = 0;
    for (const from of ALL) {
      for (const to of ALL) {
        if (moves(from).includes(to)) {
          expect(transition(from, [from], to)).toBe(to);
          taken++;
          continue;
        }
        let err: unknown = null;
        try {
          transition(from, [from], to);
        } catch (e) {
          err = e;
        }
        expect(isServiceError(err, 'illegal_transition'), `${from} -> ${to}`).toBe(true);
      }
    }
    expect(taken).toBe(ALL.reduce((n, s) => n + moves(s).length, 0));
  });

  test('a legal move from a state the caller did not expect to leave is refused', () => {
    for (const from of ALL) {
      const others = ALL.filter((s) => s !== from);
      for (const to of moves(from)) expect(() => transition(from, others, to)).toThrow(/illegal|expected/);
    }
  });
});
