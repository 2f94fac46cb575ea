/**
 * The dashboard map (src/web/client/geo.ts) with synthetic coordinates:
 * projection corners and known cities, clustering into cells, rejection of
 * missing / out-of-range coordinates, the SVG (one circle per cell, titles
 * escaped, the zero-point case), and agreement with d3-geo's projection
 * that draws the land (src/web/world-map.ts).
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { geoEquirectangular } from 'd3-geo';
import { clusterPoints, MAP, mapSvg, mapViewBox, pointRadius, project, type GeoRecord } from '../../src/web/client/geo';

const rec = (lat: number, lon: number, location: string | null = null, country_name: string | null = null): GeoRecord => ({
  coordinates: { lat, lon },
  location,
  country_name,
});

describe('project', () => {
  test('corners and centre of the globe', () => {
    expect(project(-180, 90)).toEqual({ x: 0, y: 0 });
    expect(project(180, -90)).toEqual({ x: MAP.width, y: MAP.height });
    expect(project(0, 0)).toEqual({ x: MAP.width / 2, y: MAP.height / 2 });
  });

  test('clamps values outside the globe', () => {
    expect(project(-500, 200)).toEqual(project(-180, 90));
    expect(project(999, -999)).toEqual(project(180, -90));
  });

  test('agrees with d3-geo geoEquirectangular (scale 960/2π, centred), which draws the land', () => {
    const d3 = geoEquirectangular().scale(MAP.width / (2 * Math.PI)).translate([MAP.width / 2, MAP.height / 2]);
    fc.assert(
      fc.property(fc.double({ min: -179.9, max: 179.9, noNaN: true }), fc.double({ min: -89.9, max: 89.9, noNaN: true }), (lon, lat) => {
        const ours = project(lon, lat);
        const theirs = d3([lon, lat])!;
        expect(Math.abs(ours.x - theirs[0])).toBeLessThan(1e-6);
        expect(Math.abs(ours.y - theirs[1])).toBeLessThan(1e-6);
      }),
    );
  });

  test('Berlin is north-east of the centre, Sydney south-east, New York north-west', () => {
    const c = project(0, 0);
    const berlin = project(13.4, 52.5);
    const sydney = project(151.2, -33.9);
    const ny = project(-74, 40.7);
    expect(berlin.x > c.x && berlin.y < c.y).toBe(true);
    expect(sydney.x > c.x && sydney.y > c.y).toBe(true);
    expect(ny.x < c.x && ny.y < c.y).toBe(true);
  });

  test('the viewBox crops to the shown latitudes', () => {
    const vb = mapViewBox();
    expect(vb.x).toBe(0);
    expect(vb.width).toBe(MAP.width);
    expect(vb.y).toBeCloseTo(project(0, MAP.top).y, 1);
    expect(vb.y + vb.height).toBeCloseTo(project(0, MAP.bottom).y, 1);
  });
});

describe('clusterPoints', () => {
  test('records in one 1-degree cell become one point at their mean, labelled by the first', () => {
    const c = clusterPoints([rec(52.52, 13.4, 'Berlin', 'Germany'), rec(52.4, 13.1, 'Potsdam', 'Germany'), rec(48.85, 2.35, 'Paris', 'France')]);
    expect(c.placed).toBe(3);
    expect(c.unplaced).toBe(0);
    expect(c.points).toHaveLength(2);
    const [first, second] = c.points;
    expect(first).toMatchObject({ count: 2, label: 'Berlin, Germany' });
    expect(first!.lat).toBeCloseTo(52.46, 2);
    expect(first!.lon).toBeCloseTo(13.25, 2);
    expect(second).toMatchObject({ count: 1, label: 'Paris, France' });
    expect(second!.x).toBeCloseTo(project(2.35, 48.85).x, 1);
  });

  test('missing, null, non-numeric and out-of-range coordinates are counted as unplaced', () => {
    const bad: GeoRecord[] = [
      {},
      { coordinates: null },
      { coordinates: { lat: '1', lon: 2 } },
      { coordinates: { lat: 91, lon: 0 } },
      { coordinates: { lat: 0, lon: -181 } },
      { coordinates: { lat: Number.NaN, lon: 0 } },
    ];
    const c = clusterPoints([...bad, rec(0, 0)]);
    expect(c).toMatchObject({ placed: 1, unplaced: 6 });
    expect(c.points).toHaveLength(1);
  });

  test('a label falls back to the country code, then to the coordinates', () => {
    expect(clusterPoints([{ coordinates: { lat: 1, lon: 2 }, country: 'DE' }]).points[0]!.label).toBe('DE');
    expect(clusterPoints([rec(1.5, -2.25)]).points[0]!.label).toBe('1.50, -2.25');
  });

  test('every placed record is in exactly one point; points are biggest first', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ lat: fc.double({ min: -90, max: 90, noNaN: true }), lon: fc.double({ min: -180, max: 180, noNaN: true }) }), { maxLength: 200 }), (cs) => {
        const c = clusterPoints(cs.map((x) => rec(x.lat, x.lon)), 5);
        expect(c.points.reduce((s, p) => s + p.count, 0)).toBe(cs.length);
        for (let i = 1; i < c.points.length; i++) expect(c.points[i - 1]!.count).toBeGreaterThanOrEqual(c.points[i]!.count);
      }),
    );
  });
});

describe('mapSvg', () => {
  test('zero points: the map still renders (ocean, land, borders) with a description saying so', () => {
    const svg = mapSvg({ width: 960, height: 480, land: 'M0 0L10 0L10 10Z', borders: 'M1 1L2 2' }, clusterPoints([]));
    expect(svg).toContain('class="map-land" d="M0 0L10 0L10 10Z"');
    expect(svg).toContain('class="map-borders"');
    expect(svg).toContain('No working proxy has a known location.');
    expect(svg).not.toContain('<circle');
  });

  test('one circle per point with an escaped title; without shapes only the ocean and points', () => {
    const c = clusterPoints([rec(10, 10, '<b>"Town"</b>', 'A & B'), rec(10.2, 10.3, 'x', 'y'), rec(-30, 120, 'Perth', 'Australia')]);
    const svg = mapSvg(null, c);
    expect(svg.match(/<circle /g)).toHaveLength(2);
    expect(svg).toContain('&lt;b&gt;&quot;Town&quot;&lt;/b&gt;, A &amp; B: 2 proxies');
    expect(svg).toContain('Perth, Australia: 1 proxy');
    expect(svg).toContain('3 working proxies in 2 places.');
    expect(svg).not.toContain('map-land');
    expect(svg).not.toContain('<b>');
  });

  test('point radius grows with the count and is capped; the map scales it to stay the same on screen', () => {
    expect(pointRadius(1)).toBe(5);
    expect(pointRadius(5)).toBeGreaterThan(pointRadius(2));
    expect(pointRadius(1_000_000)).toBe(18);
    const c = clusterPoints([rec(10, 10)]);
    expect(mapSvg(null, c)).toContain(' r="5"');
    expect(mapSvg(null, c, 2.5)).toContain(' r="12.5"');
    expect(mapSvg(null, c, -1)).toContain(' r="5"');
  });
});
