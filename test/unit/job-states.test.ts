/**
 * The job's machine (src/jobs/job-states.ts on src/state-machine.ts), tested
 * by the rules it exists for, not against a copy of its table: the paths the
 * actor takes are legal, nothing probes before it is paid for, every live
 * state can fail, a response needs a finished file, nothing goes back (the
 * states nor the progress phase they report), and the machine refuses
 * everything else with illegal_transition.
 */
import { describe, expect, test } from 'bun:test';
import { isServiceError } from '../../src/errors';
import { LEAF_ERROR_CODES } from '../../src/error-codes';
import { isFinal, JOB_STATES, JOB_TRANSITIONS, PHASE_OF, type JobState } from '../../src/jobs/job-states';
import { PROGRESS_PHASES } from '../../src/jobs/progress';
import { StateMachine } from '../../src/state-machine';

const ALL = Object.values(JOB_STATES) as JobState[];
const { VALIDATING, RESERVING, PROBING, VALIDATING_URLS, WRITING, COMPLETED, FAILED } = JOB_STATES;

/** States reachable from `start` without passing through `avoid`. */
function reachable(start: JobState, avoid: JobState | null = null): Set<JobState> {
  const seen = new Set<JobState>([start]);
  const todo = [start];
  while (todo.length > 0) {
    for (const next of JOB_TRANSITIONS[todo.pop()!]) {
      if (next === avoid || seen.has(next)) continue;
      seen.add(next);
      todo.push(next);
    }
  }
  return seen;
}

function walk(path: JobState[]): JobState {
  const m = new StateMachine<JobState>('job', JOB_TRANSITIONS, path[0]!);
  for (const to of path.slice(1)) m.move(m.state, to);
  return m.state;
}

describe('the job machine', () => {
  test('the actor\'s paths are legal: with and without custom URLs, and failing from each live state', () => {
    expect(walk([VALIDATING, RESERVING, PROBING, WRITING, COMPLETED])).toBe(COMPLETED);
    expect(walk([VALIDATING, RESERVING, PROBING, VALIDATING_URLS, WRITING, COMPLETED])).toBe(COMPLETED);
    for (const live of ALL.filter((s) => !isFinal(s))) expect(walk([live, FAILED])).toBe(FAILED);
  });

  test('nothing is probed before the units are reserved', () => {
    const withoutReserving = reachable(VALIDATING, RESERVING);
    expect(withoutReserving.has(PROBING)).toBe(false);
    expect(withoutReserving.has(VALIDATING_URLS)).toBe(false);
    expect(withoutReserving.has(COMPLETED)).toBe(false);
  });

  test('a job completes only from writing (its result file is finished first)', () => {
    for (const s of ALL) expect(JOB_TRANSITIONS[s].includes(COMPLETED)).toBe(s === WRITING);
    expect(reachable(VALIDATING, WRITING).has(COMPLETED)).toBe(false);
  });

  test('completed and failed are the final states, every other state can fail, and nothing goes back', () => {
    expect(ALL.filter(isFinal).sort()).toEqual([COMPLETED, FAILED].sort());
    for (const s of ALL) {
      // no cycle: a state cannot be reached again once left
      for (const next of JOB_TRANSITIONS[s]) expect(reachable(next).has(s)).toBe(false);
    }
    expect([...reachable(VALIDATING)].sort()).toEqual([...ALL].sort());
  });

  test('illegal moves are refused and change nothing; so is a legal move from a state the caller did not expect', () => {
    const m = new StateMachine<JobState>('job', JOB_TRANSITIONS, PROBING);
    for (const to of [VALIDATING, RESERVING, PROBING, COMPLETED]) {
      let err: unknown = null;
      try {
        m.move(PROBING, to);
      } catch (e) {
        err = e;
      }
      expect(isServiceError(err, LEAF_ERROR_CODES.ILLEGAL_TRANSITION)).toBe(true);
      expect(m.state).toBe(PROBING);
    }
    expect(() => m.move([RESERVING, VALIDATING_URLS], WRITING)).toThrow('job: probing -> writing (expected to leave reserving | validating_urls)');
    expect(m.state).toBe(PROBING);
    m.move(PROBING, WRITING);
    expect(m.state).toBe(WRITING);
    for (const to of ALL) expect(() => walk([COMPLETED, to])).toThrow(/illegal|expected/);
  });

  test('each state reports its own progress phase', () => {
    expect(new Set(ALL.map((s) => PHASE_OF[s])).size).toBe(ALL.length);
  });

  test('progress never goes back: along every move but failing, the reported phase advances', () => {
    const order = Object.values(PROGRESS_PHASES) as string[];
    for (const from of ALL) {
      for (const to of JOB_TRANSITIONS[from]) {
        if (to === FAILED) continue; // failing ends the job from any phase
        expect(order.indexOf(PHASE_OF[to]), `${from} -> ${to}`).toBeGreaterThan(order.indexOf(PHASE_OF[from]));
      }
    }
  });
});
