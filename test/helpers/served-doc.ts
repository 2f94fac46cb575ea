/**
 * The OpenAPI document the service serves at /docs/json, from the app built
 * in-process the way src/server.ts builds the public app (createApp; the
 * admin API has its own listener and is not part of it), with collaborators
 * that are never called: building the document touches no database, socket
 * or probe.
 */
import { createApp, type ExtraRoutes } from '../../src/http/app';
import { fakeAppDeps } from './app-deps';

/** `extra`: more routes (tests add routes that fail on purpose). */
export function inProcessApp(extra: ExtraRoutes[] = []) {
  return createApp(fakeAppDeps({}, 'the OpenAPI document'), extra);
}

export async function servedOpenApiDocument(): Promise<any> {
  const res = await inProcessApp().handle(new Request('http://127.0.0.1:3000/docs/json'));
  if (res.status !== 200) throw new Error(`GET /docs/json answered ${res.status}`);
  return res.json();
}
