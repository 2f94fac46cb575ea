/**
 * The OpenAPI document the service serves at /docs/json, from the app built
 * in-process the way src/server.ts builds the public app (createApp; the
 * admin API has its own listener and is not part of it), with collaborators that are never called: building the document touches
 * no database, socket or probe.
 */
import { parseConfig } from '../../src/config';
import { createApp, type ExtraRoutes } from '../../src/http/app';
import type { AppDeps } from '../../src/http/context';
import { VERSION } from '../../src/version';
import { memoryLogger } from '../../src/log';

/** `extra`: more routes (tests add routes that fail on purpose). */
export function inProcessApp(extra: ExtraRoutes[] = []) {
  const unused = () => {
    throw new Error('not used when serving the OpenAPI document');
  };
  const deps: AppDeps = {
    config: parseConfig({ PORT: '0', DATA_DIR: '/tmp/pc-served-doc-unused' }, process.cwd()),
    log: memoryLogger('debug'),
    version: VERSION,
    startedAt: Date.now(),
    now: () => new Date(),
    database: { ping: async () => true },
    accounts: { findByApiKey: unused, overview: unused },
    checks: { run: unused, assertAccepting: () => {} },
    results: { secret: 'unused-result-secret-0000000000', store: { open: unused } },
    progress: {} as AppDeps['progress'],
  };
  return createApp(deps, extra);
}

export async function servedOpenApiDocument(): Promise<any> {
  const res = await inProcessApp().handle(new Request('http://127.0.0.1:3000/docs/json'));
  if (res.status !== 200) throw new Error(`GET /docs/json answered ${res.status}`);
  return res.json();
}
