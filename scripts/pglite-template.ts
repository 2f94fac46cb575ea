/**
 * Install step: build the embedded database's template (db/pglite-template.ts)
 * so a new DATA_DIR starts from it instead of running initdb (~0.6 s and
 * ~320 MiB instead of ~2.5 s and ~800 MiB). Safe to run repeatedly; prints
 * one JSON line. Never fails the install: without the template the service
 * runs initdb as before.
 * Usage: bun scripts/pglite-template.ts   (from "postinstall")
 */
import { ensureTemplate } from '../db/pglite-template';

try {
  const t0 = performance.now();
  const r = await ensureTemplate();
  console.log(JSON.stringify({ pglite_template: r.file, built: r.built, bytes: r.bytes, ms: Math.round(performance.now() - t0) }));
} catch (err) {
  console.log(JSON.stringify({ pglite_template: null, error: (err as Error).message }));
}
