/**
 * What a check job and a pool's owner set up alike (src/jobs/actor.ts,
 * src/jobs/pool-actor.ts), so both probe the same way:
 *
 * - probeSettingsFor: the settings of every shard of a run: the judge's
 *   (SettingsFactory: judge, own addresses, the SSRF switch) for the type
 *   and timeout, without the TLS judge when the run opted out of the https
 *   check (probe/settings.ts withoutHttpsCheck).
 * - originGeo: the geo fields of a working result, looked up by its origin.
 */
import type { GeoInfo } from '../geo/geo';
import { withoutHttpsCheck } from '../probe/settings';
import type { ProbeResult, ProbeSettings } from '../probe/types';
import type { CheckType } from '../proxy/types';
import type { GeoPort, SettingsFactory } from './ports';

export function probeSettingsFor(make: SettingsFactory, type: CheckType, timeoutMs: number, https: boolean): ProbeSettings {
  const settings = make(type, timeoutMs);
  return https ? settings : withoutHttpsCheck(settings);
}

/** The geo of a working result's origin; null for a failed one or one without origin. */
export function originGeo(geo: GeoPort, r: Pick<ProbeResult, 'status' | 'origin'>): GeoInfo | null {
  return r.status === 'working' && r.origin !== null ? geo.lookup(r.origin) : null;
}
