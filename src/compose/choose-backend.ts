/**
 * The one place that asks how this service runs: an API node of a cluster
 * (NATS_URL; its probes run on the regions' agents) or one embedded process.
 */
import type { Config } from '../config';
import type { StopStep } from '../stop-steps';
import { clusterBackend } from './cluster-backend';
import { embeddedBackend } from './embedded-backend';
import type { OpenBackend } from './probe-backend';

export function chooseBackend(config: Config, o: { threads?: number | undefined; undo: StopStep[] }): OpenBackend {
  return config.cluster.role === 'embedded' ? embeddedBackend(config, o) : clusterBackend(config);
}
