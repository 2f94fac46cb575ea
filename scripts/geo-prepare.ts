/**
 * Install step: compact @ip-location-db/asn's CSV into the geo cache file
 * (node_modules/.cache/proxycheck-geo/) so the first start of the service
 * does not spend ~1 s on it. Safe to run repeatedly; prints one JSON line.
 * Usage: bun scripts/geo-prepare.ts   (e.g. from "postinstall" or .ci/run)
 */
import { prepareGeoCache } from '../src/geo/geo';

const r = prepareGeoCache();
console.log(JSON.stringify({ geo_cache: r.file, source: r.source, ms: Math.round(r.ms) }));
