/**
 * The dashboard's world map, pure: an equirectangular projection (plate
 * carrée: x grows with longitude, y falls with latitude, 960 x 480 for the
 * whole globe; the same numbers as d3-geo's geoEquirectangular with scale
 * 960 / 2π, which draws the land server-side in src/web/world-map.ts), point
 * clustering of the working proxies by coordinate cell, and the SVG markup of
 * the map. No DOM, no I/O: unit-tested with synthetic coordinates.
 */
import { escapeXml } from './svg';

export const MAP = Object.freeze({
  /** Width and height of the projected globe. */
  width: 960,
  height: 480,
  /** Latitudes shown (the Arctic Ocean and Antarctica are cropped). */
  top: 84,
  bottom: -58,
});

export interface Point {
  x: number;
  y: number;
}

/** Longitude/latitude in degrees -> map units. Values outside the globe are clamped. */
export function project(lon: number, lat: number): Point {
  const l = Math.max(-180, Math.min(180, lon));
  const p = Math.max(-90, Math.min(90, lat));
  return { x: ((l + 180) / 360) * MAP.width, y: ((90 - p) / 180) * MAP.height };
}

/** The viewBox of the cropped map: `x y width height`. */
export function mapViewBox(): { x: number; y: number; width: number; height: number } {
  const y0 = project(0, MAP.top).y;
  const y1 = project(0, MAP.bottom).y;
  return { x: 0, y: round1(y0), width: MAP.width, height: round1(y1 - y0) };
}

/** What a map point needs from a proxy result record. */
export interface GeoRecord {
  coordinates?: { lat: unknown; lon: unknown } | null;
  location?: string | null;
  country_name?: string | null;
  country?: string | null;
}

export interface MapPoint extends Point {
  lat: number;
  lon: number;
  /** Proxies in this cell. */
  count: number;
  /** "City, Country" of the cell's first proxy (or the coordinates). */
  label: string;
}

export interface Clustered {
  points: MapPoint[];
  /** Records with usable coordinates. */
  placed: number;
  /** Records without (null, missing or out of range). */
  unplaced: number;
}

function validCoordinates(c: GeoRecord['coordinates']): { lat: number; lon: number } | null {
  if (c === null || c === undefined || typeof c !== 'object') return null;
  const { lat, lon } = c;
  if (typeof lat !== 'number' || typeof lon !== 'number') return null;
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) return null;
  return { lat, lon };
}

function placeLabel(r: GeoRecord, lat: number, lon: number): string {
  const parts = [r.location, r.country_name ?? r.country].filter((s): s is string => typeof s === 'string' && s !== '');
  return parts.length > 0 ? parts.join(', ') : `${lat.toFixed(2)}, ${lon.toFixed(2)}`;
}

/**
 * Groups records into cells of `cellDeg` degrees (default 1), one point per
 * cell at the mean position of its records, biggest cells first (so small
 * ones are drawn on top). Records without valid coordinates are counted.
 */
export function clusterPoints(records: readonly GeoRecord[], cellDeg = 1): Clustered {
  const size = cellDeg > 0 && Number.isFinite(cellDeg) ? cellDeg : 1;
  const cells = new Map<string, { latSum: number; lonSum: number; count: number; label: string }>();
  let placed = 0;
  let unplaced = 0;
  for (const r of records) {
    const c = validCoordinates(r.coordinates);
    if (c === null) {
      unplaced++;
      continue;
    }
    placed++;
    const key = `${Math.floor(c.lat / size)}:${Math.floor(c.lon / size)}`;
    const cell = cells.get(key);
    if (cell === undefined) cells.set(key, { latSum: c.lat, lonSum: c.lon, count: 1, label: placeLabel(r, c.lat, c.lon) });
    else {
      cell.latSum += c.lat;
      cell.lonSum += c.lon;
      cell.count++;
    }
  }
  const points: MapPoint[] = [];
  for (const cell of cells.values()) {
    const lat = cell.latSum / cell.count;
    const lon = cell.lonSum / cell.count;
    const p = project(lon, lat);
    points.push({ x: round1(p.x), y: round1(p.y), lat, lon, count: cell.count, label: cell.label });
  }
  points.sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
  return { points, placed, unplaced };
}

/** Radius of a point in screen pixels: grows with the square root of its count, 5..18. */
export function pointRadius(count: number): number {
  return Math.min(18, round1(5 + Math.sqrt(Math.max(1, count) - 1) * 2));
}

/** The land and border paths drawn by the server (src/web/world-map.ts). */
export interface WorldShapes {
  width: number;
  height: number;
  land: string;
  borders: string;
}

/**
 * The map's SVG: ocean, land, borders (when `world` is given), one circle
 * per point with a <title> ("Berlin, Germany: 3 proxies"), an accessible
 * name and description. `unitsPerPixel` (map width / drawn width) keeps the
 * points the same size on screen whatever the map's size.
 */
export function mapSvg(world: WorldShapes | null, clustered: Clustered, unitsPerPixel = 1): string {
  const k = Number.isFinite(unitsPerPixel) && unitsPerPixel > 0 ? Math.min(8, unitsPerPixel) : 1;
  const vb = mapViewBox();
  const n = clustered.placed;
  const desc =
    n === 0
      ? 'No working proxy has a known location.'
      : `${n} working ${n === 1 ? 'proxy' : 'proxies'} in ${clustered.points.length} ${clustered.points.length === 1 ? 'place' : 'places'}.`;
  const out: string[] = [
    `<svg class="map" viewBox="${vb.x} ${vb.y} ${vb.width} ${vb.height}" role="img" aria-labelledby="map-title map-desc" xmlns="http://www.w3.org/2000/svg">`,
    `<title id="map-title">World map of working proxies</title>`,
    `<desc id="map-desc">${escapeXml(desc)}</desc>`,
    `<rect class="map-ocean" x="${vb.x}" y="${vb.y}" width="${vb.width}" height="${vb.height}"/>`,
  ];
  if (world !== null) {
    out.push(`<path class="map-land" d="${escapeXml(world.land)}"/>`);
    out.push(`<path class="map-borders" d="${escapeXml(world.borders)}"/>`);
  }
  out.push('<g class="map-points">');
  for (const p of clustered.points) {
    const what = `${p.label}: ${p.count} ${p.count === 1 ? 'proxy' : 'proxies'}`;
    out.push(`<circle cx="${p.x}" cy="${p.y}" r="${round1(pointRadius(p.count) * k)}" data-count="${p.count}"><title>${escapeXml(what)}</title></circle>`);
  }
  out.push('</g></svg>');
  return out.join('');
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
