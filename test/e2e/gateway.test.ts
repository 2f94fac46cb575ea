/**
 * The gateway as the service starts it (src/compose/gateway.ts): off without
 * GATEWAY_PORT; with GATEWAY_PORT=0 on a free port (logged), its keys checked
 * through the API's key cache, counted in /metrics and /me; a port in use
 * stops the process with one line. A key whose account has no such pool is
 * a 407 here (test/interop/gateway*.test.ts drive the gateway over real
 * upstreams, gateway-pools.test.ts over a real pool).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { curl } from '../helpers/gateway';
import { sampleValue } from '../helpers/prometheus';
import { serviceEnv, serviceStore, readLines, type ServiceStore } from '../helpers/process';
import { startTestService, type TestService } from '../helpers/service';

describe('the gateway in the service', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService({ GATEWAY_PORT: '0', POOL_ROUNDS: 'false' /* verdicts seeded, none checked */ });
  }, 30_000);

  afterAll(async () => {
    await t?.stop();
  });

  test('GATEWAY_PORT=0: a free port, logged; a key of the API without a pool is a 407, counted in /metrics; /me has the gateway figures', async () => {
    const port = t.service.gatewayPort as number;
    expect(port).toBeGreaterThan(0);
    expect(t.logs.find((l) => l.msg === 'gateway listening')).toMatchObject({ host: '127.0.0.1', port });
    expect(t.logs.find((l) => l.msg === 'ready')).toMatchObject({ gatewayPort: port });
    expect((await curl(['-x', `http://pool-abcdefghij:${t.key}@127.0.0.1:${port}`, 'http://127.0.0.1:9/'])).status).toBe(407);
    expect((await curl(['-x', `http://127.0.0.1:${port}`, 'http://127.0.0.1:9/'])).status).toBe(407);
    const metrics = await (await fetch(`${t.adminUrl}/metrics`)).text();
    expect(sampleValue(metrics, 'proxycheck_gateway_refused_total', { reason: 'auth' })).toBe(2);
    expect(sampleValue(metrics, 'proxycheck_gateway_connections_open')).toBeGreaterThanOrEqual(0);
    const me = (await (await fetch(`${t.url}/me`, { headers: { 'X-API-Key': t.key } })).json()) as { gateway: unknown };
    expect(me.gateway).toEqual({ connections_24h: 0, bytes_24h: 0 });
  });

  test('without GATEWAY_PORT there is no gateway', async () => {
    const other = await startTestService({ POOL_ROUNDS: 'false' });
    try {
      expect(other.service.gatewayPort).toBeNull();
      expect(other.logs.some((l) => l.msg === 'gateway listening')).toBe(false);
    } finally {
      await other.stop();
    }
  });
});

describe('a gateway port in use', () => {
  let store: ServiceStore;
  beforeAll(async () => {
    store = await serviceStore();
  });
  afterAll(async () => {
    await store?.cleanup();
  });

  test('the process stops at start with one line naming GATEWAY_PORT, exit 1', async () => {
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', () => r()));
    const port = (holder.address() as AddressInfo).port;
    try {
      const child = Bun.spawn([process.execPath, 'src/main.ts'], {
        cwd: resolve(import.meta.dir, '../..'),
        env: serviceEnv(store, { GATEWAY_PORT: String(port), LOG_LEVEL: 'warn' }),
        stdin: 'ignore',
        stdout: 'pipe',
        stderr: 'pipe',
      });
      const lines: string[] = [];
      await Promise.all([readLines(child.stderr, (l) => l !== '' && lines.push(l)), readLines(child.stdout, () => {})]);
      expect(await child.exited).toBe(1);
      expect(lines).toEqual([`start failed: GATEWAY_PORT=${port} on 127.0.0.1 is in use by another process: stop it or set another GATEWAY_PORT (port_in_use)`]);
    } finally {
      await new Promise<void>((r) => holder.close(() => r()));
    }
  }, 30_000);
});
