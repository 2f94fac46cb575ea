/**
 * expectedResults (src/probe/workers/lane-protocol.ts): the one count of the
 * results a shard owes, for the probe workers' Shard and the cluster's WorkShard alike.
 */
import { expect, test } from 'bun:test';
import { expectedResults, type Shard } from '../../src/probe/workers/lane-protocol';
import type { ProbeSettings } from '../../src/probe/types';

const tasks = (n: number) => Array.from({ length: n }, (_, i) => ({ index: i, proxy: { host: '192.0.2.1', port: 1 } }));
const rule = (url: string) => ({ url, requiredStatusCodes: [200], caseSensitive: false });

test('one per task for probes, one per (task, rule) for custom URLs', () => {
  const settings = {} as ProbeSettings;
  const probe: Shard = { kind: 'probe', tasks: tasks(3), settings };
  const custom: Shard = { kind: 'custom_url', tasks: tasks(3), rules: [rule('http://a/'), rule('http://b/')], settings };
  expect(expectedResults(probe)).toBe(3);
  expect(expectedResults(custom)).toBe(6);
  expect(expectedResults({ kind: 'probe', tasks: [] })).toBe(0);
});

test('a cluster shard without rules owes nothing per task', () => {
  // WorkShard's rules are optional on the wire: a custom_url shard that lost them owes 0, never NaN
  expect(expectedResults({ kind: 'custom_url', tasks: tasks(4) })).toBe(0);
});
