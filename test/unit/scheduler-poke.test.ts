import { expect, test } from 'bun:test';
import { RegionScheduler } from '../../src/jobs/scheduler';

test('poke: a region whose capacity rose grants its waiting jobs at once', () => {
  let cap = 4;
  const s = new RegionScheduler(() => cap, { minGrant: 1 });
  const grants: number[] = [];
  s.register('j', 'us1', 10, (n) => grants.push(n));
  expect(grants).toEqual([4]);
  cap = 10;
  expect(grants).toEqual([4]); // nothing runs a pass by itself
  s.poke('us1');
  expect(grants).toEqual([4, 6]);
  s.poke('us1'); // nothing pending: no grant
  s.poke('de1'); // no job there: nothing
  expect(grants).toEqual([4, 6]);
});
