/**
 * What the dashboard tells about the service it talks to, pure: read from
 * GET /health once at start. One machine or a cluster (a cluster's API node
 * lists its region `agents` in /health; one process does not): on one
 * machine every region probes from that machine, so the results say so
 * instead of a city. And whether proxies elsewhere can reach the service's
 * judge (/health `judge_reachable`, e.g. "this machine only"): when they
 * cannot, a banner says that every proxy elsewhere will fail and what the
 * operator sets. A check's own `metadata.warnings` (strings, or objects with
 * a message) are shown with its results. Where the gateway listens
 * (/health `gateway`) puts its URLs on a pool's page.
 */

export interface ServiceInfo {
  /** a cluster: regions are served by agents somewhere; else one machine probes for every region */
  cluster: boolean;
  /** /health's judge_reachable when it limits who can reach the judge, else null */
  judgeReach: string | null;
}

/** Until /health answers (or when it cannot be read): one machine, nothing known about the judge. */
export const UNKNOWN_SERVICE: ServiceInfo = Object.freeze({ cluster: false, judgeReach: null });

export function serviceInfo(health: unknown): ServiceInfo {
  if (typeof health !== 'object' || health === null) return UNKNOWN_SERVICE;
  const h = health as Record<string, unknown>;
  const reach = h.judge_reachable;
  return {
    cluster: Array.isArray(h.agents),
    judgeReach: typeof reach === 'string' && /\bonly\b/i.test(reach) ? reach : null,
  };
}

/** Where the gateway listens (/health `gateway`; host null: the API's own host), or null when the service runs none. */
export function gatewayOf(health: unknown): { host: string | null; port: number } | null {
  const g = typeof health === 'object' && health !== null ? (health as Record<string, unknown>).gateway : undefined;
  if (typeof g !== 'object' || g === null) return null;
  const { host, port } = g as Record<string, unknown>;
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 1 || port > 65535) return null;
  return { host: typeof host === 'string' && host !== '' ? host : null, port };
}

/** The banner text when proxies elsewhere cannot reach the judge, else null. */
export function judgeBanner(info: ServiceInfo): string | null {
  if (info.judgeReach === null) return null;
  return (
    `This service's judge is reachable from ${info.judgeReach}: every proxy on another machine will fail its check. ` +
    'The operator sets BASE_URL (or JUDGE_URL) to an address the proxies can reach.'
  );
}

/** The results card's region: the region's place in a cluster; on one machine, the code and where it really probes from. */
export function regionCard(meta: Record<string, unknown>, info: ServiceInfo): string {
  const code = typeof meta.region_used === 'string' ? meta.region_used : '';
  if (info.cluster) return typeof meta.region_name === 'string' ? meta.region_name : code || '—';
  return code === '' ? 'this machine' : `${code}, probed from this machine`;
}

/** A check's `metadata.warnings` as lines of text (strings as they are, objects by message or code). */
export function checkWarnings(meta: Record<string, unknown> | undefined): string[] {
  const w = meta?.warnings;
  if (!Array.isArray(w)) return [];
  const out: string[] = [];
  for (const item of w) {
    if (typeof item === 'string' && item !== '') out.push(item);
    else if (typeof item === 'object' && item !== null) {
      const o = item as Record<string, unknown>;
      const text = typeof o.message === 'string' ? o.message : typeof o.code === 'string' ? o.code : '';
      if (text !== '') out.push(text);
    }
  }
  return out;
}
