/**
 * A region agent's one listener (HOST/PORT; in ROLE=all a free port on
 * HOST): GET /judge (the judge its proxies reach, unless JUDGE_URL names
 * another), GET /health, GET /metrics. No public API.
 */
import { reachableHost } from '../config';
import { judgeResponseFor } from '../judge/server';
import type { StopStep } from '../stop-steps';
import { bind } from './bind';

export interface AgentListenerParts {
  host: string;
  port: number;
  /** The key its /judge signs with. */
  judgeKey: string;
  /** The /health body, read per request. */
  health: () => Record<string, unknown>;
  metrics: { render(): Promise<string>; readonly contentType: string };
  undo: StopStep[];
}

export function serveAgent(p: AgentListenerParts): { url: string; port: number } {
  const server = bind({ setting: 'PORT', host: p.host, port: p.port }, () => serve(p));
  p.undo.push(() => server.stop(true));
  const port = server.port!;
  return { url: `http://${reachableHost(p.host)}:${port}`, port };
}

function serve(p: AgentListenerParts) {
  return Bun.serve({
    hostname: p.host,
    port: p.port,
    reusePort: false,
    async fetch(request, srv) {
      const path = new URL(request.url).pathname;
      if (request.method !== 'GET' && request.method !== 'HEAD') return new Response('method not allowed', { status: 405 });
      if (path === '/judge') return judgeResponseFor(request, srv.requestIP(request)?.address ?? '', p.judgeKey);
      if (path === '/health') return Response.json(p.health());
      if (path === '/metrics') return new Response(await p.metrics.render(), { headers: { 'content-type': p.metrics.contentType } });
      return Response.json({ error: 'Not found', message: `No route ${request.method} ${path}` }, { status: 404 });
    },
  });
}
