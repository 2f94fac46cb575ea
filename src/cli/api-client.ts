/**
 * The CLI's client of the HTTP API (fetch) and of the WebSocket progress
 * channel. Never the database. Every failure becomes a CliError with the
 * exit code of docs/CLI.md:
 *   401 -> 3, 402 -> 4 (with how many checks are missing), other 4xx -> 5,
 *   5xx and network failures -> 6.
 * `httpError` (status + body -> CliError) is pure.
 */
import type { PoolEvent } from '../pools/events';
import { CliError, EXIT } from './exit-codes';
import { ENTRY_ERROR_CODES } from '../error-codes';

// ---- API shapes the CLI reads: the contract's (src/contract) ---------------------

import type { CheckResponseBody as ServiceCheckResponse } from '../contract/checks';
import type { CheckAcceptedBody as AcceptedBody, CheckJobBody as ServiceJob } from '../contract/jobs';
import type { MeBody as ServiceMe } from '../contract/me';
import type { HealthBody as ServiceHealth, RegionListBody as ServiceRegions } from '../contract/service';
import type { PoolBody as PoolObject, PoolChangedBody as ServicePoolChanged, PoolProxyBody as PoolProxyObject, PoolWarningBody } from '../contract/pools';
import type { ProgressMessageBody as ProgressMessage } from '../contract/ws';

/**
 * An answer as the CLI reads it: the contract's shape with the fields below
 * `keep` optional. The CLI also talks to other servers of the ClearProxy
 * contract and to older versions of this one, which leave out this
 * service's additions (`errors`, `total_blocked`, `agents`, ...): it renders
 * what came.
 */
type Lenient<T> = T extends readonly (infer U)[] ? Lenient<U>[] : T extends object ? (string extends keyof T ? T : { [K in keyof T]?: Lenient<T[K]> }) : T;

export type CheckSummaryBody = Pick<ServiceCheckResponse['summary'], 'total_working' | 'countries' | 'anonymity_levels' | 'top_isps'> &
  Lenient<Omit<ServiceCheckResponse['summary'], 'total_working' | 'countries' | 'anonymity_levels' | 'top_isps'>>;
export interface CheckResponseBody {
  summary: CheckSummaryBody;
  /** `warnings`: a ClearProxy-compatible server may send plain strings */
  metadata: Lenient<Omit<ServiceCheckResponse['metadata'], 'warnings' | 'proxy_type'>> & Pick<ServiceCheckResponse['metadata'], 'total_checked'> & {
    proxy_type?: string;
    warnings?: (Lenient<NonNullable<ServiceCheckResponse['metadata']['warnings']>[number]> | string)[];
  };
  result_url: ServiceCheckResponse['result_url'];
  result_urls?: ServiceCheckResponse['result_urls'];
}
export type RegionsBody = Pick<ServiceRegions, 'default'> & { regions: (Pick<ServiceRegions['regions'][number], 'code' | 'name' | 'endpoints'> & Lenient<ServiceRegions['regions'][number]>)[] };
export type HealthBody = Lenient<Omit<ServiceHealth, 'gateway'>> & Pick<ServiceHealth, 'status' | 'gateway'>;
export type PoolWarning = Lenient<PoolWarningBody> & { code: string };
export type PoolChangedBody = Omit<ServicePoolChanged, 'warnings'> & { warnings?: PoolWarning[] };

/**
 * GET /me as the CLI reads it: this service's answer (the contract's Me), or
 * the ClearProxy contract's second shape of `user` (seed-api: checks_used and
 * remaining_checks, no id, no history_count), so the CLI reads both.
 */
export type MeBody = Omit<ServiceMe, 'user' | 'history_count'> & {
  history_count?: number;
  user: Partial<ServiceMe['user']> & Pick<ServiceMe['user'], 'email'> & { checks_used?: number; remaining_checks?: number };
};

export type { AcceptedBody, PoolObject, PoolProxyObject, ProgressMessage };
/** GET /checks/{jobId}: the contract's CheckJob, its `result` read as the check response. */
export type JobBody = Omit<ServiceJob, 'result'> & { result?: CheckResponseBody };

/** One page of GET /pools/{id}/proxies as it came: the body text, and the next page's cursor (null on the last). */
export interface PoolProxiesPage {
  text: string;
  nextCursor: string | null;
}

/** One message of `/ws?pool=` (src/pools/events.ts PoolEvent). */
export type PoolEventBody = PoolEvent;

import type { WebhookBody, WebhookDeliveryBody } from '../contract/webhooks';
export type { WebhookBody, WebhookDeliveryBody };

// ---- errors ------------------------------------------------------------------

const fmt = (n: unknown) => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n));

function describe(body: unknown): { error: string | undefined; message: string | undefined } {
  if (typeof body !== 'object' || body === null) {
    const text = typeof body === 'string' ? body.trim().slice(0, 200) : undefined;
    return { error: undefined, message: text === '' ? undefined : text };
  }
  const b = body as Record<string, unknown>;
  return {
    error: typeof b.error === 'string' ? b.error : undefined,
    message: typeof b.message === 'string' ? b.message : undefined,
  };
}

/** The CliError for a non-2xx answer. `what` names the request ("POST /check"). */
export function httpError(status: number, body: unknown, what: string): CliError {
  const { error, message } = describe(body);
  const detail = [error, message].filter((s) => s !== undefined).join(': ');
  if (status === 401) {
    return new CliError(
      EXIT.AUTH,
      ENTRY_ERROR_CODES.CLI_AUTH,
      `Authentication failed (${detail || 'HTTP 401'}). Pass a valid key with --key, set PROXYCHECK_API_KEY, or run \`proxycheck login\`.`,
    );
  }
  if (status === 402) {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const required = b.required;
    const available = b.available;
    const shortfall = typeof b.shortfall === 'number' ? b.shortfall : typeof required === 'number' && typeof available === 'number' ? required - available : undefined;
    const text =
      shortfall !== undefined
        ? `Not enough checks: this list needs ${fmt(required)} checks but the account has ${fmt(available)}: ${fmt(shortfall)} missing. Top up the account or check fewer proxies.`
        : `Not enough checks (${detail || 'HTTP 402'}).`;
    return new CliError(EXIT.QUOTA, ENTRY_ERROR_CODES.CLI_QUOTA, text);
  }
  if (status >= 400 && status < 500) {
    const regions = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).available_regions : undefined;
    if (Array.isArray(regions)) {
      // the message lists them too: print the list once, ours
      return new CliError(
        EXIT.CLIENT,
        ENTRY_ERROR_CODES.CLI_REQUEST_REFUSED,
        `${what} was refused (HTTP ${status}${error ? `, ${error}` : ''}). Regions: ${regions.join(', ')} (\`proxycheck regions\` names them).`,
      );
    }
    return new CliError(EXIT.CLIENT, ENTRY_ERROR_CODES.CLI_REQUEST_REFUSED, `${what} was refused (HTTP ${status}${detail ? `, ${detail}` : ''}).`);
  }
  return new CliError(EXIT.NETWORK, ENTRY_ERROR_CODES.CLI_SERVER_ERROR, `${what} failed on the server (HTTP ${status}${detail ? `, ${detail}` : ''}). Try again later.`);
}

/** How to point the CLI at the service's address (the end of a "Cannot reach" error). */
export const WHERE_HINT = 'Another address (the service\'s PORT or host)? Pass --url http://HOST:PORT, set PROXYCHECK_URL, or save it with `proxycheck login --url http://HOST:PORT`';

/** The CliError for a request that got no HTTP answer. */
export function networkError(err: unknown, baseUrl: string, what: string): CliError {
  if (err instanceof CliError) return err;
  const e = err as { code?: string; message?: string; name?: string };
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') {
    return new CliError(EXIT.NETWORK, ENTRY_ERROR_CODES.CLI_TIMEOUT, `${what}: no answer from ${baseUrl} in time.`, { cause: err });
  }
  const refused = e?.code === 'ConnectionRefused' || e?.code === 'ECONNREFUSED';
  const unknownHost = e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN';
  const reason = refused ? 'connection refused (is the service running?)' : unknownHost ? 'host not found' : (e?.message ?? String(err));
  // the service may be elsewhere (another PORT, another host): say how to name it
  const elsewhere = refused || unknownHost ? `. ${WHERE_HINT}` : '';
  return new CliError(EXIT.NETWORK, ENTRY_ERROR_CODES.CLI_NETWORK, `Cannot reach ${baseUrl} (${what}): ${reason}${elsewhere}`, { cause: err });
}

async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// ---- client ------------------------------------------------------------------

export interface ApiClientOptions {
  /** Base URL, no trailing slash. */
  url: string;
  key: string | undefined;
  /** Per-request deadline of the short calls (not /check, not downloads). Default 30 s. */
  timeoutMs?: number;
}

export class ApiClient {
  readonly url: string;
  readonly #key: string | undefined;
  readonly #timeoutMs: number;

  constructor(opts: ApiClientOptions) {
    this.url = opts.url;
    this.#key = opts.key;
    this.#timeoutMs = opts.timeoutMs ?? 30_000;
  }

  #requireKey(): string {
    if (this.#key === undefined) {
      throw new CliError(EXIT.AUTH, ENTRY_ERROR_CODES.CLI_NO_KEY, 'No API key. Pass --key, set PROXYCHECK_API_KEY, or run `proxycheck login`.');
    }
    return this.#key;
  }

  async #request<T>(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    path: string,
    init: { auth: boolean; body?: unknown; signal?: AbortSignal; noDeadline?: boolean; headers?: Record<string, string> },
  ): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...init.headers };
    if (init.auth) headers['x-api-key'] = this.#requireKey();
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    const what = `${method} ${path.split('?')[0]}`;
    const signals = [init.signal, init.noDeadline ? undefined : AbortSignal.timeout(this.#timeoutMs)].filter((s) => s !== undefined);
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, {
        method,
        headers,
        ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
        ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
        // a big check answers after minutes: no idle timer on this side
        ...(init.noDeadline ? { timeout: false } : {}),
      });
    } catch (err) {
      if (init.signal?.aborted) throw init.signal.reason ?? err;
      throw networkError(err, this.url, what);
    }
    const body = await readBody(res).catch((err) => {
      throw networkError(err, this.url, what);
    });
    if (!res.ok) throw httpError(res.status, body, what);
    return body as T;
  }

  me(signal?: AbortSignal): Promise<MeBody> {
    return this.#request('GET', '/me', { auth: true, ...(signal ? { signal } : {}) });
  }

  regions(signal?: AbortSignal): Promise<RegionsBody> {
    return this.#request('GET', '/regions', { auth: false, ...(signal ? { signal } : {}) });
  }

  /** /health answers 503 with a body when degraded: that body is returned, not thrown. */
  async health(signal?: AbortSignal): Promise<{ status: number; body: HealthBody }> {
    let res: Response;
    try {
      res = await fetch(`${this.url}/health`, { signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]) : AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      throw networkError(err, this.url, 'GET /health');
    }
    const body = await readBody(res);
    if (res.status === 503 && typeof body === 'object' && body !== null) return { status: 503, body: body as HealthBody };
    if (!res.ok) throw httpError(res.status, body, 'GET /health');
    return { status: res.status, body: body as HealthBody };
  }

  /** True when /health answers without region agents: one machine probes for every region. False for a cluster, or when /health cannot be read. */
  oneMachine(signal?: AbortSignal): Promise<boolean> {
    return this.health(signal).then(
      (h) => !Array.isArray(h.body.agents),
      () => false,
    );
  }

  check(body: Record<string, unknown>, signal?: AbortSignal): Promise<CheckResponseBody> {
    return this.#request('POST', '/check', { auth: true, body, noDeadline: true, ...(signal ? { signal } : {}) });
  }

  // ---- pools -------------------------------------------------------------------

  createPool(body: Record<string, unknown>, signal?: AbortSignal): Promise<PoolChangedBody> {
    return this.#request('POST', '/pools', { auth: true, body, ...(signal ? { signal } : {}) });
  }

  async pools(signal?: AbortSignal): Promise<PoolObject[]> {
    return (await this.#request<{ pools: PoolObject[] }>('GET', '/pools', { auth: true, ...(signal ? { signal } : {}) })).pools;
  }

  pool(id: string, signal?: AbortSignal): Promise<PoolObject> {
    return this.#request('GET', `/pools/${encodeURIComponent(id)}`, { auth: true, ...(signal ? { signal } : {}) });
  }

  updatePool(id: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<PoolChangedBody> {
    return this.#request('PATCH', `/pools/${encodeURIComponent(id)}`, { auth: true, body, ...(signal ? { signal } : {}) });
  }

  async deletePool(id: string, signal?: AbortSignal): Promise<void> {
    await this.#request('DELETE', `/pools/${encodeURIComponent(id)}`, { auth: true, ...(signal ? { signal } : {}) });
  }

  // ---- webhooks ----------------------------------------------------------------

  createWebhook(body: Record<string, unknown>, signal?: AbortSignal): Promise<WebhookBody & { secret: string }> {
    return this.#request('POST', '/webhooks', { auth: true, body, ...(signal ? { signal } : {}) });
  }

  async webhooks(signal?: AbortSignal): Promise<WebhookBody[]> {
    return (await this.#request<{ webhooks: WebhookBody[] }>('GET', '/webhooks', { auth: true, ...(signal ? { signal } : {}) })).webhooks;
  }

  testWebhook(id: string, signal?: AbortSignal): Promise<{ id: string; event: string }> {
    return this.#request('POST', `/webhooks/${encodeURIComponent(id)}/test`, { auth: true, ...(signal ? { signal } : {}) });
  }

  async webhookDeliveries(id: string, signal?: AbortSignal): Promise<WebhookDeliveryBody[]> {
    return (await this.#request<{ deliveries: WebhookDeliveryBody[] }>('GET', `/webhooks/${encodeURIComponent(id)}/deliveries`, { auth: true, ...(signal ? { signal } : {}) })).deliveries;
  }

  async deleteWebhook(id: string, signal?: AbortSignal): Promise<void> {
    await this.#request('DELETE', `/webhooks/${encodeURIComponent(id)}`, { auth: true, ...(signal ? { signal } : {}) });
  }

  /** One page of the pool's proxies in `query.format` (txt, csv or json), as text; the next cursor from X-Next-Cursor or next_cursor. */
  async poolProxies(id: string, query: URLSearchParams, signal?: AbortSignal): Promise<PoolProxiesPage> {
    const path = `/pools/${encodeURIComponent(id)}/proxies?${query}`;
    const what = `GET /pools/${id}/proxies`;
    const signals = [signal, AbortSignal.timeout(this.#timeoutMs)].filter((x) => x !== undefined);
    let res: Response;
    try {
      res = await fetch(`${this.url}${path}`, { headers: { 'x-api-key': this.#requireKey() }, signal: AbortSignal.any(signals) });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      throw networkError(err, this.url, what);
    }
    const text = await res.text().catch((err) => {
      throw networkError(err, this.url, what);
    });
    if (!res.ok) {
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON: the text
      }
      throw httpError(res.status, body, what);
    }
    let nextCursor = res.headers.get('x-next-cursor');
    if (query.get('format') === 'json' || query.get('format') === null) nextCursor = (JSON.parse(text) as { next_cursor: string | null }).next_cursor;
    return { text, nextCursor };
  }

  /** POST /check with `Prefer: respond-async`: the 202 once the checks are reserved (the job then outlives this connection). */
  submitCheck(body: Record<string, unknown>, signal?: AbortSignal): Promise<AcceptedBody> {
    return this.#request('POST', '/check', { auth: true, body, headers: { prefer: 'respond-async' }, ...(signal ? { signal } : {}) });
  }

  /** GET /checks/{jobId}: the job's state, progress, and its response once completed. */
  job(jobId: string, signal?: AbortSignal): Promise<JobBody> {
    return this.#request('GET', `/checks/${encodeURIComponent(jobId)}`, { auth: true, ...(signal ? { signal } : {}) });
  }

  /** DELETE /checks/{jobId}: resolves once the job is cancelled and refunded (204). */
  async cancelJob(jobId: string, signal?: AbortSignal): Promise<void> {
    await this.#request('DELETE', `/checks/${encodeURIComponent(jobId)}`, { auth: true, noDeadline: true, ...(signal ? { signal } : {}) });
  }

  /** The key the client sends (a usage of it, e.g. in the gateway's proxy URL); the same error as a call without one. */
  apiKey(): string {
    return this.#requireKey();
  }

  /**
   * Subscribes to /ws?pool= with the key. Resolves once the socket is open,
   * or with null when it did not open within `openTimeoutMs` (refused: the
   * caller asks GET /pools/{id} why). Each text message that is an event goes
   * to `onEvent`.
   */
  poolEvents(poolId: string, onEvent: (e: PoolEventBody) => void, openTimeoutMs = 5000): Promise<PoolEventsChannel | null> {
    return openSocket(this.#wsUrl(`pool=${encodeURIComponent(poolId)}`), this.#requireKey(), openTimeoutMs).then((s) => {
      if (s === null) return null;
      s.ws.onmessage = (e) => {
        const m = jsonOf(e.data);
        if (typeof m === 'object' && m !== null && typeof (m as PoolEventBody).event === 'string') onEvent(m as PoolEventBody);
      };
      return { closed: s.closed, close: () => s.close() };
    });
  }

  /** GET of a signed result link (no key). Returns the streaming response. */
  async download(link: string, signal?: AbortSignal): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(link, { ...(signal ? { signal } : {}), timeout: false });
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      throw networkError(err, new URL(link).origin, 'download');
    }
    if (!res.ok) throw httpError(res.status, await readBody(res), 'downloading the result');
    return res;
  }

  /**
   * Subscribes to /ws?jobId= (with the key, so the final message carries the
   * link). Resolves once the socket is open, or with null when it cannot open
   * within `openTimeoutMs` (the check then runs without live progress).
   * `onClose` hears once when an open socket closes by itself (not by close()).
   */
  progress(jobId: string, onMessage: (m: ProgressMessage) => void, openTimeoutMs = 5000, onClose?: () => void): Promise<ProgressChannel | null> {
    return openSocket(this.#wsUrl(`jobId=${encodeURIComponent(jobId)}`), this.#key, openTimeoutMs).then((s) => {
      if (s === null) return null;
      let ours = false;
      void s.closed.then(() => {
        if (!ours) onClose?.();
      });
      s.ws.onmessage = (e) => {
        const m = jsonOf(e.data);
        if (typeof m === 'object' && m !== null && typeof (m as ProgressMessage).details === 'object') onMessage(m as ProgressMessage);
      };
      return {
        close: () => {
          ours = true;
          s.close();
        },
      };
    });
  }

  #wsUrl(query: string): string {
    return `${this.url.replace(/^http/, 'ws')}/ws?${query}`;
  }
}

interface OpenSocket {
  ws: WebSocket;
  /** Resolves when the open socket closes (by itself or by close()), with the code and reason. */
  closed: Promise<{ code: number; reason: string }>;
  /** Stops listening and closes the socket. Idempotent. */
  close(): void;
}

/**
 * Opens a WebSocket (with the key as X-API-Key when there is one); resolves
 * once it is open, or with null when it errs, closes or does not open within
 * `openTimeoutMs`. The caller sets `onmessage` on the open socket.
 */
function openSocket(url: string, key: string | undefined, openTimeoutMs: number): Promise<OpenSocket | null> {
  return new Promise((resolve) => {
    let settled = false;
    let ws: WebSocket;
    let closed: (v: { code: number; reason: string }) => void = () => {};
    const closedP = new Promise<{ code: number; reason: string }>((r) => (closed = r));
    const settle = (v: OpenSocket | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(v);
    };
    const timer = setTimeout(() => {
      try {
        ws.close();
      } catch {
        // not open yet: nothing to close
      }
      settle(null);
    }, openTimeoutMs);
    try {
      ws = new WebSocket(url, key !== undefined ? { headers: { 'X-API-Key': key } } : {});
    } catch {
      settle(null);
      return;
    }
    ws.onopen = () =>
      settle({
        ws,
        closed: closedP,
        close: () => {
          ws.onmessage = null;
          if (ws.readyState === WebSocket.OPEN || ws.readyState === WebSocket.CONNECTING) ws.close(1000);
        },
      });
    ws.onerror = () => settle(null);
    ws.onclose = (e) => {
      closed({ code: e.code, reason: e.reason });
      settle(null);
    };
  });
}

/** A text frame's JSON, or undefined when it is not JSON (ignored by the callers). */
function jsonOf(data: unknown): unknown {
  try {
    return JSON.parse(String(data));
  } catch {
    return undefined;
  }
}

/** A pool's events socket (`/ws?pool=`): `closed` resolves when it closes, with the server's code and reason. */
export interface PoolEventsChannel {
  closed: Promise<{ code: number; reason: string }>;
  /** Stops listening and closes the socket. Idempotent. */
  close(): void;
}

export interface ProgressChannel {
  /** Stops listening and closes the socket. Idempotent. */
  close(): void;
}
