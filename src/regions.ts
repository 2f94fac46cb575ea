/**
 * The region catalogue (data) and per-region probe capacity.
 *
 * Exactly the seed's list: 19 accepted codes, in the seed's order, each with
 * 16 checking endpoints, plus `test1` ("TEST - DO NOT USE", 6 endpoints),
 * which `GET /regions` lists but a check never accepts (and the 400 region
 * error does not name). On one machine every region probes from this host;
 * a region's capacity is `endpoints x SLOTS_PER_ENDPOINT` concurrent probes
 * (DECISIONS "Regions and capacity"), enforced by src/jobs/scheduler.ts.
 */

export interface Region {
  readonly code: string;
  readonly name: string;
  readonly endpoints: number;
}

export const DEFAULT_REGION = 'us1';

/** Endpoints of every accepted region (seed "Limits"). */
export const ENDPOINTS_PER_REGION = 16;

const r = (code: string, name: string, endpoints = ENDPOINTS_PER_REGION): Region => Object.freeze({ code, name, endpoints });

/** The accepted regions, in the seed's order. */
const ACCEPTED: readonly Region[] = Object.freeze([
  r('sg1', 'Singapore'),
  r('au1', 'Sydney, Australia'),
  r('us1', 'Washington DC, USA'),
  r('us2', 'San Francisco, USA'),
  r('us3', 'Cleveland, USA'),
  r('us4', 'Portland, USA'),
  r('uk1', 'London, UK'),
  r('jp1', 'Tokyo, Japan'),
  r('jp2', 'Osaka, Japan'),
  r('kr1', 'Seoul, South Korea'),
  r('hk1', 'Hong Kong'),
  r('in1', 'Mumbai, India'),
  r('br1', 'Sao Paulo, Brazil'),
  r('de1', 'Frankfurt, Germany'),
  r('ae1', 'Dubai, UAE'),
  r('ie1', 'Dublin, Ireland'),
  r('za1', 'Cape Town, South Africa'),
  r('fr1', 'Paris, France'),
  r('se1', 'Stockholm, Sweden'),
]);

/** Listed by `GET /regions`, never accepted for a check. */
export const TEST_REGION: Region = r('test1', 'TEST - DO NOT USE', 6);

/** Every listed region: the accepted ones, then `test1`. */
export const REGIONS: readonly Region[] = Object.freeze([...ACCEPTED, TEST_REGION]);

/** The 19 codes a check accepts, in the seed's order (the 400 error's `available_regions`). */
export const ACCEPTED_REGIONS: readonly string[] = Object.freeze(ACCEPTED.map((x) => x.code));

const BY_CODE: ReadonlyMap<string, Region> = new Map(REGIONS.map((x) => [x.code, x]));
const ACCEPTED_SET: ReadonlySet<string> = new Set(ACCEPTED_REGIONS);

/** True for the 19 accepted codes (exact, case-sensitive); false for `test1` and anything else. */
export function isAcceptedRegion(code: string): boolean {
  return ACCEPTED_SET.has(code);
}

/** Any listed region (including `test1`), or undefined. */
export function findRegion(code: string): Region | undefined {
  return BY_CODE.get(code);
}

/** Display name of a listed region, or undefined. */
export function regionName(code: string): string | undefined {
  return BY_CODE.get(code)?.name;
}

export interface RegionList {
  regions: { code: string; name: string; endpoints: number }[];
  default: string;
}

/** The `GET /regions` body: fresh plain objects every call (callers may serialise or mutate them). */
export function regionList(): RegionList {
  return {
    regions: REGIONS.map(({ code, name, endpoints }) => ({ code, name, endpoints })),
    default: DEFAULT_REGION,
  };
}

/**
 * Concurrent probe slots of a region: endpoints x slotsPerEndpoint.
 * 0 for an unknown code. `slotsPerEndpoint` must be a positive integer.
 */
export function regionCapacity(code: string, slotsPerEndpoint: number): number {
  if (!Number.isInteger(slotsPerEndpoint) || slotsPerEndpoint < 1) {
    throw Object.assign(new RangeError(`slotsPerEndpoint must be a positive integer, got ${slotsPerEndpoint}`), {
      code: 'invalid_slots_per_endpoint',
    });
  }
  const region = BY_CODE.get(code);
  return region === undefined ? 0 : region.endpoints * slotsPerEndpoint;
}
