/** Tests for src/regions.ts: the catalogue matches the seed exactly; capacity. */
import { describe, expect, test } from 'bun:test';
import {
  ACCEPTED_REGIONS,
  DEFAULT_REGION,
  findRegion,
  isAcceptedRegion,
  regionCapacity,
  regionList,
  regionName,
} from '../../src/regions';

const SEED: [string, string][] = [
  ['sg1', 'Singapore'],
  ['au1', 'Sydney, Australia'],
  ['us1', 'Washington DC, USA'],
  ['us2', 'San Francisco, USA'],
  ['us3', 'Cleveland, USA'],
  ['us4', 'Portland, USA'],
  ['uk1', 'London, UK'],
  ['jp1', 'Tokyo, Japan'],
  ['jp2', 'Osaka, Japan'],
  ['kr1', 'Seoul, South Korea'],
  ['hk1', 'Hong Kong'],
  ['in1', 'Mumbai, India'],
  ['br1', 'Sao Paulo, Brazil'],
  ['de1', 'Frankfurt, Germany'],
  ['ae1', 'Dubai, UAE'],
  ['ie1', 'Dublin, Ireland'],
  ['za1', 'Cape Town, South Africa'],
  ['fr1', 'Paris, France'],
  ['se1', 'Stockholm, Sweden'],
];

describe('catalogue', () => {
  test('19 accepted codes in the seed order', () => {
    expect(ACCEPTED_REGIONS).toEqual(SEED.map(([c]) => c));
    expect(Object.isFrozen(ACCEPTED_REGIONS)).toBe(true);
  });

  test('regionList is the seed list plus test1, default us1', () => {
    const list = regionList();
    expect(list.default).toBe('us1');
    expect(DEFAULT_REGION).toBe('us1');
    expect(list.regions).toEqual([
      ...SEED.map(([code, name]) => ({ code, name, endpoints: 16 })),
      { code: 'test1', name: 'TEST - DO NOT USE', endpoints: 6 },
    ]);
  });

  test('regionList returns fresh objects', () => {
    const a = regionList();
    a.regions[0]!.name = 'changed';
    expect(regionList().regions[0]!.name).toBe('Singapore');
  });

  test('test1 is listed but not accepted', () => {
    expect(isAcceptedRegion('test1')).toBe(false);
    expect(findRegion('test1')?.endpoints).toBe(6);
    expect(ACCEPTED_REGIONS).not.toContain('test1');
  });

  test('acceptance is exact', () => {
    for (const [c] of SEED) expect(isAcceptedRegion(c)).toBe(true);
    for (const bad of ['US1', ' us1', 'us5', '', 'toString', '__proto__']) expect(isAcceptedRegion(bad)).toBe(false);
    expect(regionName('us1')).toBe('Washington DC, USA');
    expect(regionName('nope')).toBeUndefined();
  });
});

describe('regionCapacity', () => {
  test('endpoints x slots', () => {
    expect(regionCapacity('us1', 256)).toBe(4096);
    expect(regionCapacity('sg1', 1)).toBe(16);
    expect(regionCapacity('test1', 10)).toBe(60);
    expect(regionCapacity('mars1', 10)).toBe(0);
  });

  test('rejects a bad slot count', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => regionCapacity('us1', bad)).toThrow(RangeError);
    }
  });
});
