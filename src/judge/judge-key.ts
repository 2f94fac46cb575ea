/**
 * The key the built-in judge (GET /judge, `judgeResponseFor`) signs its
 * answers with: one per process.
 *
 * The /judge route is handed the request only, and the built-in judge and the
 * checker that verifies its answers live in the same process, so the key is
 * the process's: JUDGE_KEY when the service was started with one (an
 * external checker, another node, may then verify this judge), else 32 random
 * bytes drawn once per process and never written anywhere (nothing to leak,
 * nothing to rotate: a restart is a new key).
 *
 * `claimJudgeKey` is how a service takes the key for its lifetime: every
 * running service of a process must agree on it (tests run several in one
 * process). A service without JUDGE_KEY takes whatever key the process has;
 * one with JUDGE_KEY while another runs on a different key is refused
 * (`judge_key_conflict`); when the last one releases a configured key the
 * process goes back to a fresh random key.
 */
import { randomBytes } from 'node:crypto';
import { ServiceError } from '../errors';

const randomKey = (): string => randomBytes(32).toString('base64url');

let current = randomKey();
let configured = false;
let holders = 0;

/** The key GET /judge signs with now. */
export function judgeSigningKey(): string {
  return current;
}

export interface JudgeKeyClaim {
  /** the key this service's own /judge signs with */
  key: string;
  /** idempotent */
  release(): void;
}

/** Takes the process's judge key for a service: `JUDGE_KEY` when given, else the process's random one. */
export function claimJudgeKey(judgeKey: string | undefined): JudgeKeyClaim {
  if (judgeKey !== undefined && judgeKey !== current) {
    if (holders > 0) {
      throw new ServiceError(
        'judge_key_conflict',
        'another service in this process signs its /judge with a different key; services sharing a process need the same JUDGE_KEY',
      );
    }
    current = judgeKey;
    configured = true;
  }
  holders++;
  let released = false;
  return {
    key: current,
    release() {
      if (released) return;
      released = true;
      holders--;
      if (holders === 0 && configured) {
        current = randomKey();
        configured = false;
      }
    },
  };
}
