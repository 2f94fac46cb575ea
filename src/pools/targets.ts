/**
 * A pool's targets (DECISIONS "Targets in pools"): its `customUrls`, each
 * with a `name` the API, the `?target=` filter and the gateway's
 * `-target-<name>` use. Pure.
 *
 * A name is 1..32 of [a-z0-9-]. Not given: made from the URL's host
 * (lower-cased, every other character `-`, at most 32), made unique within
 * the pool with `-2`, `-3`, ... (the base shortened to keep 32). Given names
 * must be unique (a repeat is the caller's 400).
 */
import type { CustomUrlRule } from '../probe/types';

/** A custom URL rule of a pool: a rule with its name. */
export interface PoolTarget extends CustomUrlRule {
  name: string;
}

export const TARGET_NAME_MAX = 32;
export const TARGET_NAME = /^[a-z0-9-]{1,32}$/;

export function isTargetName(v: unknown): v is string {
  return typeof v === 'string' && TARGET_NAME.test(v);
}

/** The name a rule gets from its URL's host. */
export function defaultTargetName(url: string): string {
  let host = '';
  try {
    host = new URL(url).hostname;
  } catch {
    host = '';
  }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  const base = host.toLowerCase().replace(/[^a-z0-9-]/g, '-').slice(0, TARGET_NAME_MAX);
  return base === '' ? 'target' : base;
}

/**
 * Rules with their names: a given name kept, a missing one made from the
 * host and made unique among all (given names win: they are taken first).
 */
export function nameTargets(rules: readonly (CustomUrlRule & { name?: string | undefined })[]): PoolTarget[] {
  const taken = new Set<string>();
  for (const r of rules) if (r.name !== undefined) taken.add(r.name);
  return rules.map((r) => {
    const { name, ...rule } = r;
    if (name !== undefined) return { ...rule, name };
    const base = defaultTargetName(r.url);
    let candidate = base;
    for (let n = 2; taken.has(candidate); n++) {
      const suffix = `-${n}`;
      candidate = base.slice(0, TARGET_NAME_MAX - suffix.length) + suffix;
    }
    taken.add(candidate);
    return { ...rule, name: candidate };
  });
}
