/**
 * The dashboard map's land and country borders, drawn once per process from
 * the world-atlas npm package (Natural Earth 1:110m TopoJSON, read from
 * node_modules, no download) with topojson-client and d3-geo's
 * equirectangular projection (scale 960 / 2π, centred: the same numbers as
 * src/web/client/geo.ts `project`, so the browser's points land on this
 * land). d3-geo cuts shapes at the antimeridian, which a naive lon/lat plot
 * would smear across the map. Served as /app/world.json:
 * `{width, height, land, borders}` (SVG path data, one decimal).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { geoEquirectangular, geoPath } from 'd3-geo';
import { feature, mesh } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { MAP, type WorldShapes } from './client/geo';

const require = createRequire(import.meta.url);

/** Land and borders of a world-atlas topology (objects `land` and `countries`). Pure. */
export function worldShapes(topology: Topology): WorldShapes {
  const land = topology.objects.land;
  const countries = topology.objects.countries as GeometryCollection | undefined;
  if (land === undefined || countries === undefined) throw new Error('world-atlas topology lacks objects.land / objects.countries');
  const projection = geoEquirectangular()
    .scale(MAP.width / (2 * Math.PI))
    .translate([MAP.width / 2, MAP.height / 2])
    .precision(0.5);
  const path = geoPath(projection).digits(1);
  return {
    width: MAP.width,
    height: MAP.height,
    land: path(feature(topology, land)) ?? '',
    borders: path(mesh(topology, countries, (a, b) => a !== b)) ?? '',
  };
}

let cached: { json: string; etag: string } | null = null;

/** /app/world.json's body (built on first use, then kept). */
export function worldJson(): { json: string; etag: string } {
  if (cached !== null) return cached;
  const file = require.resolve('world-atlas/countries-110m.json');
  const topology = JSON.parse(readFileSync(file, 'utf8')) as Topology;
  const json = JSON.stringify(worldShapes(topology));
  cached = { json, etag: `"${new Bun.CryptoHasher('sha256').update(json).digest('hex').slice(0, 16)}"` };
  return cached;
}
