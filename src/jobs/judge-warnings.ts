/**
 * A check's warnings about the judge (pure): when the judge is reachable
 * from this machine (or its network) only and some of the check's proxies
 * are elsewhere, they cannot reach it and fail; the check says so in
 * `metadata.warnings` (`judge_local_only` / `judge_network_only`, DECISIONS
 * "Failures that explain themselves"), naming the settings that change it.
 */
import { isIP } from 'node:net';
import type { JudgeReach } from '../judge/judge-address';
import { isBlockedAddress } from '../probe/codec/ssrf';

export interface JobWarning {
  code: string;
  message: string;
}

export const JUDGE_WARNING_CODES = Object.freeze({ localOnly: 'judge_local_only', networkOnly: 'judge_network_only' } as const);

const bare = (host: string) => host.replace(/^\[|\]$/g, '').toLowerCase();

/** On this machine: localhost, or one of its own addresses (loopback included). */
function onThisMachine(host: string, own: ReadonlySet<string>): boolean {
  const h = bare(host);
  return h === 'localhost' || own.has(h) || (isIP(h) === 4 && h.startsWith('127.'));
}

/** On a private network: an address literal that is not public (a host name is not known: elsewhere). */
function onPrivateNetwork(host: string, own: ReadonlySet<string>): boolean {
  const h = bare(host);
  return onThisMachine(h, own) || (isIP(h) !== 0 && isBlockedAddress(h));
}

export function judgeWarnings(judge: { url: string; reach: JudgeReach | null }, hosts: Iterable<string>, own: ReadonlySet<string>): JobWarning[] {
  if (judge.reach === 'this machine only') {
    for (const h of hosts) {
      if (onThisMachine(h, own)) continue;
      return [
        {
          code: JUDGE_WARNING_CODES.localOnly,
          message: `The judge (${judge.url}) is reachable from this machine only: proxies on other machines cannot reach it and fail. The operator sets BASE_URL (or JUDGE_URL) to an address they can reach.`,
        },
      ];
    }
  }
  if (judge.reach === 'this network only') {
    for (const h of hosts) {
      if (onPrivateNetwork(h, own)) continue;
      return [
        {
          code: JUDGE_WARNING_CODES.networkOnly,
          message: `The judge (${judge.url}) is on a private address: proxies outside its network cannot reach it and fail. The operator sets BASE_URL (or JUDGE_URL) to an address they can reach.`,
        },
      ];
    }
  }
  return [];
}
