/**
 * Routes that need no key: GET /regions, GET /health, GET /judge.
 * In a cluster /regions counts each region's live agents and slots, and
 * /health lists the agents (deps.regions.agents); embedded, the process is
 * every region's one agent. /health `gateway` says where the gateway
 * listens (`proxycheck pool gateway` builds its URLs from it).
 */
import { Elysia } from 'elysia';
import { regionList, ACCEPTED_REGIONS } from '../../regions';
import { judgeResponseFor } from '../../judge/server';
import type { AppDeps } from '../context';
import { jsonResponse } from '../errors';
import { docs } from '../openapi';

export function publicRoutes(deps: AppDeps) {
  const live = deps.regions;
  const regions = () => {
    const list = regionList();
    return { ...list, regions: list.regions.map((r) => ({ ...r, ...live.region(r.code) })) };
  };
  return new Elysia({ name: 'public-routes' })
    .get('/regions', () => jsonResponse(200, regions()), { ...docs.regions })
    .get(
      '/health',
      async () => {
        const dbOk = await deps.database.ping();
        const now = deps.now();
        const gateway = deps.gateway ?? null;
        const body = {
          status: dbOk ? 'ok' : 'degraded',
          version: deps.version,
          uptime: Math.floor((now.getTime() - deps.startedAt) / 1000),
          timestamp: now.toISOString(),
          regions: ACCEPTED_REGIONS.length,
          database: dbOk ? 'ok' : 'down',
          ...(deps.judgeReach != null ? { judge_reachable: deps.judgeReach } : {}),
          ...(live.agents !== undefined ? { agents: live.agents() } : {}),
          // where the gateway listens (absent: no GATEWAY_PORT); host null: the API's own host name
          ...(gateway !== null ? { gateway } : {}),
        };
        return jsonResponse(dbOk ? 200 : 503, body);
      },
      { ...docs.health },
    )
    .get(
      '/judge',
      ({ request, server }) => judgeResponseFor(request, server?.requestIP(request)?.address ?? '', deps.judgeKey),
      { ...docs.judge },
    );
}
