/**
 * What the HTTP layer needs from the rest of the service, injected so the app
 * can be built in tests with real or fake collaborators. The HTTP layer never
 * opens a probe socket and never runs SQL itself: it goes through these ports.
 */
import type { Config } from '../config';
import type { CheckJobsPort, ChecksPort, ProgressPort } from '../jobs/ports';
import type { Logger } from '../log';
import type { AuthenticatedAccount } from './auth';
import type { ResultStore } from '../results/store';

export type { ChecksPort } from '../jobs/ports';

export interface AccountsPort {
  findByApiKey(key: string): Promise<AuthenticatedAccount | null>;
  /** The GET /me body (DECISIONS' first shape). */
  overview(accountId: string, now: Date): Promise<unknown>;
}

export interface ResultsPort {
  /** The result-link HMAC key; never empty (the composition root refuses to start without one). */
  secret: string;
  /** Where finished results are read from (src/results/store.ts). */
  store: Pick<ResultStore, 'open'>;
}

/** Who probes from each region now (a cluster: the live agents, src/cluster/registry.ts). */
export interface LiveRegionsPort {
  region(code: string): { agents: number; capacity: number };
  /** The live agents, for /health. */
  agents(): { region: string; agent: string; slots: number; inFlight: number; exitIps: string[]; version: string; lastSeenMs: number }[];
}

export interface AppDeps {
  config: Config;
  log: Logger;
  version: string;
  /** ms since epoch when the process started (for /health uptime). */
  startedAt: number;
  now: () => Date;
  database: { ping(): Promise<boolean> };
  accounts: AccountsPort;
  checks: ChecksPort;
  /** Jobs as resources: GET / DELETE /checks/{jobId} (src/jobs/check-jobs.ts). */
  jobs: CheckJobsPort;
  /** Signed result downloads. */
  results: ResultsPort;
  /** WebSocket progress fan-out. */
  progress: ProgressPort;
  /** A cluster's live regions; absent: one embedded process serves every region (agents 1, capacity endpoints x SLOTS_PER_ENDPOINT). */
  liveRegions?: LiveRegionsPort;
  /** The key this service's own GET /judge signs its answers with (src/probe/codec/integrity.ts). */
  judgeKey: string;
}
