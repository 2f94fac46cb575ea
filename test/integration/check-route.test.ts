/**
 * Tests for src/http/routes/check.ts inside the real app (createApp, no
 * sockets) over a fake ChecksPort that records what it is asked to run: the
 * query reaches the validator whole (a repeated parameter is a 400, never its
 * last value), the cheap counts answer before per-entry validation, and
 * nothing rejected ever reaches the check (so nothing is charged).
 */
import { beforeEach, describe, expect, test } from 'bun:test';
import { parseConfig } from '../../src/config';
import { createApp } from '../../src/http/app';
import type { AppDeps } from '../../src/http/context';
import type { CheckRequest } from '../../src/http/check-request';
import { memoryLogger } from '../../src/log';

const KEY = 'pc_route-test-key';
const ran: CheckRequest[] = [];

function deps(env: Record<string, string> = {}): AppDeps {
  const unused = () => {
    throw new Error('not used by the check routes');
  };
  return {
    config: parseConfig({ PORT: '0', DATA_DIR: '/tmp/pc-check-route-unused', ...env }, process.cwd()),
    log: memoryLogger('debug'),
    version: '9.9.9',
    startedAt: Date.now(),
    now: () => new Date(),
    database: { ping: async () => true },
    accounts: { findByApiKey: async (k) => (k === KEY ? { id: 'acc-1', email: 'a@b.io' } : null), overview: unused },
    checks: {
      run: async (_owner, req) => {
        ran.push(req);
        return { ok: true };
      },
      assertAccepting: () => {},
    },
    results: { secret: 'unused-result-secret-0000000000', store: { open: unused } },
    progress: {} as AppDeps['progress'],
  };
}

const app = createApp(deps());
const BASE = 'http://127.0.0.1:3000';

async function post(path: string, body: BodyInit, contentType = 'text/plain') {
  const res = await app.handle(new Request(BASE + path, { method: 'POST', body, headers: { 'x-api-key': KEY, 'content-type': contentType } }));
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeEach(() => {
  ran.length = 0;
});

describe('POST /check-raw query parameters', () => {
  test('?type=http&type=socks5 is a 400 naming the parameter, and no check runs', async () => {
    const r = await post('/check-raw?type=http&type=socks5', '1.2.3.4:80\n');
    expect(r).toEqual({ status: 400, body: { error: 'Invalid request', message: 'type: expected a single value, given 2 times' } });
    expect(ran).toHaveLength(0);
  });

  test.each(['region=us1&region=us1', 'timeout=2000&jobId=abc&timeout=3000', 'jobId=abc&jobId=abc'])('?%s is a 400', async (qs) => {
    const r = await post(`/check-raw?${qs}`, '1.2.3.4:80\n');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid request');
    expect(ran).toHaveLength(0);
  });

  test('single parameters are taken; unknown ones may repeat', async () => {
    const r = await post('/check-raw?type=socks5&region=de1&timeout=4000&foo=1&foo=2', '1.2.3.4:80\n');
    expect(r.status).toBe(200);
    expect(ran.map((q) => [q.type, q.region, q.timeoutMs])).toEqual([['socks5', 'de1', 4000]]);
  });
});
