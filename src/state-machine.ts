/**
 * The one transition helper of the service's state machines (pure: no I/O,
 * no clock). graphile-worker's setModeX is the model: a machine is a table
 * (each state -> the states it may move to), and every move names the
 * states the caller believes it leaves. A move that is not in the table, or
 * that starts from a state the caller did not expect, throws
 * `illegal_transition` (LEAF_ERROR_CODES, src/error-codes.ts) and changes
 * nothing: it is a bug in the caller, never
 * an I/O condition, and it is loud instead of silently corrupting what the
 * machine guards. A state with no way out is final.
 *
 * The machines on it, each documenting its states in its own header:
 *   src/jobs/job-states.ts        a check job (JobActor)
 *   src/jobs/service.ts           CheckService: running -> draining -> stopped
 *   src/jobs/scheduler.ts         a job at the region scheduler: active -> cancelled
 *   src/jobs/pool-actor.ts        a pool's owner: created -> running <-> starved <-> idle -> stopping -> stopped (or lost)
 *   src/jobs/pool-owner.ts        a node's pool owner (its actors, its leases)
 *   src/results/writer.ts         a result writer (both stores: one machine, a publish step)
 *   src/cluster/agent-runner.ts   a region agent: created -> running -> draining -> stopped
 *   src/probe/workers/lane.ts     a shard in its lane: running -> cancelled -> done
 *   src/gateway/connection.ts     a gateway client connection (its phases carry their data)
 *   src/gateway/upstream-leg.ts   one upstream try of a gateway connection
 *
 * Not on it: the byte-level parsers (src/probe/net/exchange-states.ts,
 * src/probe/codec/http-response.ts, tunnel-client.ts). Their "state" is the position in a
 * protocol exchange, moved several times per probe on the hot path, a small
 * integer compared in a switch; their pure tables have tests of their own.
 */
import { ServiceError } from './errors';
import { LEAF_ERROR_CODES } from './error-codes';

/** For each state, the states it may move to (an empty list: final). */
export type TransitionTable<S extends string> = Readonly<Record<S, readonly S[]>>;

/** The table, frozen (its lists too), so no caller can add a move at run time. */
export function transitionTable<S extends string>(table: Record<S, readonly S[]>): TransitionTable<S> {
  for (const to of Object.values<readonly S[]>(table)) Object.freeze(to);
  return Object.freeze(table);
}

/** True when `state` has no way out. */
export function isFinalState<S extends string>(table: TransitionTable<S>, state: S): boolean {
  return table[state].length === 0;
}

/**
 * `to`, when `from` is one of `expected` (the states the caller believes it
 * leaves) and the table allows `from -> to`; otherwise throws
 * `illegal_transition` naming the machine.
 */
export function transition<S extends string>(machine: string, table: TransitionTable<S>, from: S, expected: S | readonly S[], to: S): S {
  const ok = typeof expected === 'string' ? expected === from : expected.includes(from);
  if (!ok || !table[from].includes(to)) {
    const leaves = typeof expected === 'string' ? expected : expected.join(' | ');
    throw new ServiceError(LEAF_ERROR_CODES.ILLEGAL_TRANSITION, `${machine}: ${from} -> ${to} (expected to leave ${leaves})`);
  }
  return to;
}

/** A machine's current state; the only way it changes is `move`. */
export class StateMachine<S extends string> {
  readonly #name: string;
  readonly #table: TransitionTable<S>;
  #state: S;

  /**
   * @param name    for the error message (which machine refused)
   * @param table   its transitions (transitionTable)
   * @param initial the state it starts in
   */
  constructor(name: string, table: TransitionTable<S>, initial: S) {
    if (!(initial in table)) throw new ServiceError(LEAF_ERROR_CODES.ILLEGAL_TRANSITION, `${name}: unknown initial state ${initial}`);
    this.#name = name;
    this.#table = table;
    this.#state = initial;
  }

  get state(): S {
    return this.#state;
  }

  /** True when the current state has no way out. */
  get final(): boolean {
    return isFinalState(this.#table, this.#state);
  }

  /** Moves to `to`, asserting the state it leaves is (one of) `from`; throws illegal_transition (and stays) otherwise. */
  move(from: S | readonly S[], to: S): void {
    this.#state = transition(this.#name, this.#table, this.#state, from, to);
  }
}
