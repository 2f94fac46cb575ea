/** The public service routes' shapes: GET /regions, GET /health, GET /judge. */
import { Type as t, type Static } from '@sinclair/typebox';
import { closed, int0, oneOf, orNull } from './common';
import { VERSION } from '../version';

/** The examples the document shows on these schemas (OpenAPI `examples`). */
export const HEALTH_EXAMPLE = { status: 'ok', version: VERSION, uptime: 42, timestamp: '2026-11-22T10:00:00.000Z', regions: 19, database: 'ok' };
export const REGIONS_EXAMPLE = { regions: [{ code: 'sg1', name: 'Singapore', endpoints: 16, agents: 2, capacity: 18000 }, { code: 'test1', name: 'TEST - DO NOT USE', endpoints: 6, agents: 0, capacity: 0 }], default: 'us1' };
export const JUDGE_EXAMPLE = { judge: 'proxycheck/1', nonce: 'b3c1…', remoteAddress: '203.0.113.7', requestLine: 'GET /judge?n=b3c1… HTTP/1.1', headers: [['host', 'judge.example:3000'], ['via', '1.1 proxy']], sig: 'v1:189:5d0c7a2f9e41b8c36a0d2e7f14b9c85e3a6f0d21c7b4e98a2f5d6c0b13e7a94f' };

export const RegionList = t.Object(
  {
    regions: t.Array(
      t.Object(
        {
          code: t.String(),
          name: t.String(),
          endpoints: t.Integer({ minimum: 1 }),
          agents: int0({ description: 'Live probe agents of the region (embedded: 1, the process itself)' }),
          capacity: int0({ description: 'Probe slots of those agents together (embedded: endpoints x SLOTS_PER_ENDPOINT); 0: checks to the region answer 503' }),
        },
        closed,
      ),
    ),
    default: t.String(),
  },
  { ...closed, examples: [REGIONS_EXAMPLE] },
);
export type RegionListBody = Static<typeof RegionList>;

export const JUDGE_REACH = ['public', 'this network only', 'this machine only'] as const;

export const Health = t.Object(
  {
    status: oneOf(['ok', 'degraded'] as const),
    version: t.String(),
    uptime: t.Integer({ minimum: 0, description: 'Seconds since start' }),
    timestamp: t.String({ format: 'date-time' }),
    regions: t.Integer({ description: 'Count of regions a check accepts' }),
    database: oneOf(['ok', 'down'] as const),
    judge_reachable: t.Optional(
      oneOf(JUDGE_REACH, {
        description:
          'Who can reach the built-in judge, decided at start (docs/OPERATIONS.md "The judge"); absent when the operator chose it (BASE_URL, JUDGE_URL, a listener on loopback only). Proxies elsewhere than `this machine only` / `this network only` fail every check',
      }),
    ),
    gateway: t.Optional(
      t.Object(
        { host: orNull(t.String()), port: t.Integer({ minimum: 1, maximum: 65535 }) },
        { ...closed, description: 'Only with GATEWAY_PORT: where the gateway listens. `host` null when it listens on every address (use the API\'s host name)' },
      ),
    ),
    agents: t.Optional(
      t.Array(
        t.Object(
          {
            region: t.String(),
            agent: t.String(),
            slots: int0(),
            inFlight: int0(),
            exitIps: t.Array(t.String()),
            version: t.String(),
            lastSeenMs: int0({ description: 'Milliseconds since its last heartbeat reached this node' }),
          },
          closed,
        ),
        { description: 'A cluster only: the live region agents (from their heartbeats)' },
      ),
    ),
  },
  { ...closed, examples: [HEALTH_EXAMPLE] },
);
export type HealthBody = Static<typeof Health>;

export const JudgeEcho = t.Object(
  {
    judge: t.Literal('proxycheck/1'),
    nonce: orNull(t.String()),
    remoteAddress: t.String(),
    requestLine: t.String(),
    headers: t.Array(t.Array(t.String(), { minItems: 2, maxItems: 2 })),
    sig: t.String({
      pattern: '^v1:[0-9]+:[0-9a-f]{64}$',
      description:
        'Always the last member: `v1:<L>:<hex HMAC-SHA256(judge key, the first L bytes of the body)>`; the L bytes are everything before `,"sig":"` (nonce included)',
    }),
  },
  { ...closed, examples: [JUDGE_EXAMPLE] },
);
