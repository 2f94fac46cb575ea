/**
 * Property-based fuzzing of the whole HTTP surface of the real service (real
 * sockets, startTestService): random methods, paths (every known route plus
 * random ones, traversal, percent-encoding, unicode), query strings (repeated
 * keys, huge values), headers (Content-Type variants, good and bad keys and
 * auth headers) and bodies (random JSON, broken JSON, binary).
 *
 * Properties, for every request:
 * - never a 5xx (a 503 only for what the contract documents, which these
 *   requests never reach);
 * - an error (4xx) is a JSON body; a success is JSON too, or one of the
 *   documented non-JSON answers (/, /app..., /docs..., result downloads);
 * - never a hang: every request has its own deadline;
 * - never a charge: a body sent with the valid key has no ':' anywhere, so no
 *   proxy in it can be valid and no check can start; /me's balance and
 *   history count are the same after the run;
 * - every answer the app gives carries X-Request-Id: the one sent when it is
 *   sane (1 to 128 of [A-Za-z0-9._:+/=-]), else a generated UUID, never the
 *   junk that was sent (Bun's own 431 for an oversized head is the exception);
 * - the server is healthy afterwards (/health 200).
 * Most requests go through fetch; some through a raw socket so paths reach
 * the server exactly as written (fetch would resolve "/../").
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import fc from 'fast-check';
import { startTestService, type TestService } from '../helpers/service';

const DEADLINE_MS = 10_000;
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);

let t: TestService;
beforeAll(async () => {
  // the fuzzer is about the surface: the per-account request limits (429) would hide it after 40 requests
  t = await startTestService({ RATE_LIMIT_PER_S: '1000000', MAX_JOBS_PER_ACCOUNT: '1000', POOL_ROUNDS: 'false' });
}, 60_000);
afterAll(async () => {
  await t?.stop();
}, 30_000);

const KNOWN = [
  '/', '/app', '/app/app.css', '/app/world.json', '/app/favicon.svg', '/check', '/check-raw', '/me', '/regions', '/health',
  '/judge', '/docs', '/docs/json', '/docs/init.js', '/docs/assets/swagger-ui.css', '/docs/assets/constructor',
  '/docs/assets/__proto__', '/docs/assets/%2e%2e%2fpackage.json', '/result/AAAAAAAAAAAAAAAAAAAAAA.json', '/result/x.csv',
  '/pools', '/pools/abcdefghijklmnopqrst', '/pools/abcdefghijklmnopqrst/proxies',
  '/result/constructor', '/checks/job-1', '/checks/x', '/checks/__proto__', '/checks/', '/ws', '/admin/show', '/admin/create-account', '/admin/__proto__', '/admin/constructor',
];

const segment = fc.oneof(
  fc.constantFrom('..', '.', '%2e%2e', '%2E%2e%2f', '%00', '%', '%zz', '%c0%ae', '__proto__', 'constructor', 'prototype', '~', ';', '*'),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map(encodeURIComponent),
  fc.stringMatching(/^[A-Za-z0-9._-]{1,24}$/),
);
const path = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...KNOWN) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...KNOWN), fc.array(segment, { maxLength: 3 })).map(([p, s]) => [p.replace(/\/$/, ''), ...s].join('/') || '/') },
  { weight: 2, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => `/${s.join('/')}`) },
  { weight: 1, arbitrary: fc.constantFrom(...KNOWN).map((p) => p.toUpperCase()) },
);

const QUERY_KEYS = ['type', 'region', 'timeout', 'jobId', 'apiKey', 'token', 'expires', 'n', 'async', '__proto__', 'constructor', ''];
const queryValue = fc.oneof(
  fc.constantFrom('http', 'socks5', 'us1', 'de1', '1000', '', '-1', '1e3', 'abc', 'job-1', 'true', 'false', '%00', '%'),
  fc.string({ unit: 'grapheme', maxLength: 20 }).map(encodeURIComponent),
  fc.integer({ min: 1000, max: 6000 }).map((n) => 'x'.repeat(n)),
);
const query = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...QUERY_KEYS), fc.string({ maxLength: 6 }).map(encodeURIComponent)), queryValue), { maxLength: 6 })
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));

const contentType = fc.constantFrom(
  undefined, 'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/problem+json', 'application/x+json',
  'text/plain', 'text/plain; charset=latin1', 'application/octet-stream', 'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded', 'application/json; charset=ebcdic', '', ';;;', 'application/',
);
const auth = fc.constantFrom<Record<string, string>>(
  {}, { good: '' }, { 'x-api-key': 'pc_nope' }, { 'x-api-key': '' }, { 'x-api-key': ' ' }, { authorization: 'Bearer' },
  { authorization: 'Bearer pc_nope' }, { authorization: 'Basic dXNlcjpwYXNz' }, { authorization: 'Bearer  a b c' },
  { authorization: 'bearer __proto__' }, { 'x-api-key': 'x'.repeat(4000) },
  { good: '', prefer: 'respond-async' }, { good: '', prefer: 'respond-async; wait=5, "' }, { prefer: 'respond-async' },
);

/** A body; `good` decides whether colons are stripped (with the valid key nothing may ever parse as a proxy). */
const body = fc.oneof(
  fc.constant(undefined),
  fc.json({ maxDepth: 3 }),
  fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify({ proxies: v })),
  fc
    .record(
      {
        proxies: fc.array(fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.constant(null)), { maxLength: 20 }),
        region: fc.oneof(fc.constantFrom('us1', 'de1', 'test1', 'US1'), fc.anything()),
        type: fc.oneof(fc.constantFrom('http', 'socks4', 'socks5', 'https'), fc.anything()),
        timeout: fc.oneof(fc.integer({ min: 0, max: 30000 }), fc.anything()),
        jobId: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{3,64}$/), fc.anything()),
        customUrls: fc.oneof(fc.array(fc.record({ url: fc.oneof(fc.webUrl(), fc.anything()), requiredStatusCodes: fc.anything() }), { maxLength: 12 }), fc.anything()),
      },
      { requiredKeys: [] },
    )
    .map((o) => JSON.stringify(o)),
  fc.string({ maxLength: 200 }).map((s) => `{"proxies": [${s}`),
  fc.constantFrom('{', '[', '"', 'null', 'true', '0', '{"proxies":null}', '{"__proto__":{"proxies":[]}}', '{"constructor":{"prototype":{}}}'),
  fc.uint8Array({ maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 300 }),
);

const method = fc.constantFrom('GET', 'GET', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS');

/** X-Request-Id: absent, sane, or junk a client might send (printable ASCII: what fetch and Bun's parser let through). */
const SANE_ID = /^[A-Za-z0-9._:+/=-]{1,128}$/;
const requestId = fc.oneof(
  fc.constant(undefined),
  fc.stringMatching(/^[A-Za-z0-9._:+/=-]{1,128}$/),
  fc.constantFrom('', ' ', 'a b', 'x'.repeat(129), 'a,b', '"quoted"', '<script>', '{"level":"error"}', '../../etc/passwd'),
  fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 200 }),
);

interface FuzzRequest {
  method: string;
  path: string;
  query: string;
  contentType: string | undefined;
  auth: Record<string, string>;
  body: string | Uint8Array | undefined;
  raw: boolean;
  requestId: string | undefined;
}
const anyRequest = fc.record<FuzzRequest>({ method, path, query, contentType, auth, body, raw: fc.boolean(), requestId });
/** Half the runs go past the key to the validators of /check and /check-raw. */
const checkRequest = fc.record<FuzzRequest>({
  method: fc.constant('POST'),
  path: fc.constantFrom('/check', '/check-raw', '/check/', '/CHECK'),
  query,
  contentType,
  auth: fc.oneof({ weight: 4, arbitrary: fc.constant({ good: '' }) }, { weight: 1, arbitrary: auth }),
  body,
  raw: fc.boolean(),
  requestId,
});
const request = fc.oneof(anyRequest, checkRequest);

const noColons = (b: string | Uint8Array): string | Uint8Array =>
  typeof b === 'string' ? b.replaceAll(':', '_') : b.map((x) => (x === 0x3a ? 0x5f : x));

function headersOf(r: FuzzRequest): Record<string, string> {
  const h: Record<string, string> = {};
  if (r.contentType !== undefined) h['content-type'] = r.contentType;
  if (r.requestId !== undefined) h['x-request-id'] = r.requestId;
  for (const [k, v] of Object.entries(r.auth)) {
    if (k === 'good') h['x-api-key'] = t.key;
    else h[k] = v;
  }
  return h;
}

interface Answer {
  /** The path the app sees ("/.." and "/./" resolved, by fetch or by Bun's URL). */
  sentPath: string;
  status: number;
  contentType: string;
  /** The X-Request-Id answered, or null. */
  requestId: string | null;
  text: string;
}

/** One request over a raw socket, written exactly as given (Connection: close, read to the end). */
async function rawRequest(r: FuzzRequest, bodyBytes: Uint8Array | null): Promise<Answer> {
  const port = new URL(t.url).port;
  const lines = [`${r.method} ${r.path}${r.query} HTTP/1.1`, `host: 127.0.0.1:${port}`, 'connection: close'];
  for (const [k, v] of Object.entries(headersOf(r))) lines.push(`${k}: ${v}`);
  if (bodyBytes !== null) lines.push(`content-length: ${bodyBytes.length}`);
  const head = new TextEncoder().encode(`${lines.join('\r\n')}\r\n\r\n`);
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    Bun.connect({
      hostname: '127.0.0.1',
      port: Number(port),
      socket: {
        open(s) {
          s.write(head);
          if (bodyBytes !== null) s.write(bodyBytes);
        },
        data(_s, d) {
          chunks.push(Buffer.from(d));
        },
        close() {
          resolve();
        },
        error(_s, e) {
          reject(e);
        },
        connectError(_s, e) {
          reject(e);
        },
      },
    }).catch(reject);
  });
  const all = Buffer.concat(chunks).toString('latin1');
  const end = all.indexOf('\r\n\r\n');
  const headLines = all.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headLines[0] ?? '')?.[1] ?? 0);
  const ct = headLines.find((l) => /^content-type:/i.test(l))?.replace(/^content-type:\s*/i, '') ?? '';
  const rid = headLines.find((l) => /^x-request-id:/i.test(l))?.replace(/^x-request-id:\s*/i, '') ?? null;
  let text = Buffer.from(all.slice(end + 4), 'latin1').toString('utf8');
  if (headLines.some((l) => /^transfer-encoding:\s*chunked/i.test(l))) text = dechunk(all.slice(end + 4));
  // Bun hands the app request.url as a parsed URL: "/a/../b" arrives as "/b"
  const seen = URL.canParse(r.path, 'http://h') ? new URL(r.path, 'http://h').pathname : r.path;
  return { sentPath: seen, status, contentType: ct, requestId: rid, text };
}

function dechunk(s: string): string {
  let out = '';
  let i = 0;
  for (;;) {
    const nl = s.indexOf('\r\n', i);
    if (nl < 0) break;
    const size = Number.parseInt(s.slice(i, nl), 16);
    if (!(size > 0)) break;
    out += s.slice(nl + 2, nl + 2 + size);
    i = nl + 2 + size + 2;
  }
  return Buffer.from(out, 'latin1').toString('utf8');
}

async function send(r: FuzzRequest): Promise<Answer> {
  const good = 'good' in r.auth;
  let b = r.body === undefined || r.method === 'GET' || r.method === 'HEAD' ? undefined : r.body;
  if (b !== undefined && good) b = noColons(b);
  const bytes = b === undefined ? null : typeof b === 'string' ? new TextEncoder().encode(b) : b;
  const work = async (): Promise<Answer> => {
    if (r.raw) return rawRequest(r, bytes);
    // fetch needs a URL it can parse; a path it refuses goes raw instead
    let url: URL;
    try {
      url = new URL(`${t.url}${r.path}${r.query}`);
    } catch {
      return rawRequest(r, bytes);
    }
    const res = await fetch(url, { method: r.method, headers: headersOf(r), body: bytes, redirect: 'manual' });
    return { sentPath: url.pathname, status: res.status, contentType: res.headers.get('content-type') ?? '', requestId: res.headers.get('x-request-id'), text: await res.text() };
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  });
  try {
    return await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

const isJson = (ct: string) => /^application\/json\b/i.test(ct);
/** The documented non-JSON successes: the dashboard, the docs, the result downloads, the / redirect. */
// (leading slashes repeated: the router reads "//" as "/", the / redirect)
const NON_JSON_OK = /^\/+(?:$|app(?:\/|$)|docs(?:\/|$)|result\/)/;

/** Bytes of the request line and headers (about: what Bun's parser counts). */
function headBytes(r: FuzzRequest): number {
  const h = Object.entries(headersOf(r)).reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
  return Buffer.byteLength(`${r.method} ${r.path}${r.query} HTTP/1.1\r\n`) + h + 64;
}

/**
 * Bun's HTTP parser refuses a request head over 16 KiB (--max-http-header-size)
 * with 431 and an empty body before the app sees it: documented in API.md
 * ("Limits"), the one non-JSON error, and only for such heads.
 */
const HEAD_LIMIT = 16 * 1024;

function expectContract(r: FuzzRequest, a: Answer): void {
  const where = `${r.method} ${r.path.slice(0, 80)}${r.query.slice(0, 80)} (raw ${r.raw})`;
  if (a.status === 431) {
    if (headBytes(r) < HEAD_LIMIT - 1024 || a.text !== '') throw new Error(`${where}: 431 for a head of ${headBytes(r)} bytes: ${a.text.slice(0, 200)}`);
    return;
  }
  if (a.status >= 500 || a.status < 100) throw new Error(`${where}: status ${a.status} ${a.text.slice(0, 200)}`);
  // the request id: the one sent when sane, else generated (never the junk sent)
  const sent = r.requestId?.trim();
  const want = sent !== undefined && SANE_ID.test(sent) ? sent : null;
  if (a.requestId === null || !SANE_ID.test(a.requestId)) throw new Error(`${where}: X-Request-Id ${JSON.stringify(a.requestId)} (sent ${JSON.stringify(r.requestId)})`);
  if (want !== null && a.requestId !== want) throw new Error(`${where}: X-Request-Id ${a.requestId}, sent the sane ${want}`);
  if (want === null && !/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(a.requestId)) {
    throw new Error(`${where}: X-Request-Id ${a.requestId} is not a generated one (sent ${JSON.stringify(r.requestId)})`);
  }
  if (a.status >= 400 || isJson(a.contentType)) {
    if (!isJson(a.contentType)) throw new Error(`${where}: ${a.status} with content-type ${a.contentType}: ${a.text.slice(0, 200)}`);
    if (r.method !== 'HEAD') JSON.parse(a.text);
    return;
  }
  // a success that is not JSON
  const decoded = (() => {
    try {
      return decodeURIComponent(a.sentPath);
    } catch {
      return a.sentPath;
    }
  })();
  if (!NON_JSON_OK.test(decoded) && !NON_JSON_OK.test(a.sentPath) && a.status !== 101 && a.status !== 204 && a.status !== 304) {
    throw new Error(`${where}: ${a.status} ${a.contentType} is not JSON and not a documented page`);
  }
  if (a.contentType.includes('text/html') && /DevErrorPage|Internal Server Error/.test(a.text)) throw new Error(`${where}: Bun's error page`);
}

async function account() {
  const res = await fetch(`${t.url}/me`, { headers: { 'x-api-key': t.key } });
  const me = (await res.json()) as { user: { checks: number }; history_count: number };
  return { checks: me.user.checks, history: me.history_count };
}

test(
  'no 5xx, JSON errors, no hang, no charge, healthy after',
  async () => {
    const statuses = new Set<number>();
    const before = await account();
    expect(before.checks).toBeGreaterThan(0);
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const a = await send(r);
        statuses.add(a.status);
        expectContract(r, a);
      }),
      { numRuns: RUNS, ...(process.env.FUZZ_SEED !== undefined ? { seed: Number(process.env.FUZZ_SEED) } : {}) },
    );
    // the run reached past every gate: successes, validation, auth, routing, methods
    expect([...statuses]).toEqual(expect.arrayContaining([200, 400, 401, 404, 405, 415]));
    expect(await account()).toEqual(before);
    const health = await fetch(`${t.url}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe('ok');
  },
  60_000,
);
