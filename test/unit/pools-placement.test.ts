/**
 * A cluster's pool placement (src/pools/placement.ts): rendezvous hashing is
 * deterministic whatever the order of the nodes, spreads pools about evenly,
 * and when a node joins only pools moving to it move (about 1/n); when one
 * leaves only its own pools move.
 */
import { describe, expect, test } from 'bun:test';
import { placeOwner } from '../../src/pools/placement';

const pools = Array.from({ length: 3000 }, (_, i) => `pool${String(i).padStart(8, '0')}`);
const place = (nodes: string[]) => new Map(pools.map((p) => [p, placeOwner(p, nodes)]));

describe('placeOwner', () => {
  test('none without nodes; the one node; the same owner whatever the order of the nodes', () => {
    expect(placeOwner('p', [])).toBeNull();
    expect(placeOwner('p', ['a'])).toBe('a');
    for (const p of pools.slice(0, 200)) expect(placeOwner(p, ['a', 'b', 'c'])).toBe(placeOwner(p, ['c', 'a', 'b']));
  });

  test('about even over three nodes', () => {
    const counts = new Map<string, number>();
    for (const owner of place(['node-a', 'node-b', 'node-c']).values()) counts.set(owner!, (counts.get(owner!) ?? 0) + 1);
    for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(150);
  });

  test('a node joins: only pools moving to it move; a node leaves: only its pools move', () => {
    const three = place(['node-a', 'node-b', 'node-c']);
    const four = place(['node-a', 'node-b', 'node-c', 'node-d']);
    let moved = 0;
    for (const p of pools) {
      if (three.get(p) === four.get(p)) continue;
      moved++;
      expect(four.get(p)).toBe('node-d');
    }
    expect(Math.abs(moved - 750)).toBeLessThan(150);
    const two = place(['node-a', 'node-c']);
    for (const p of pools) if (three.get(p) !== 'node-b') expect(two.get(p)).toBe(three.get(p));
  });
});
