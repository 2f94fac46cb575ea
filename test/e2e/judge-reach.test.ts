/**
 * Who can reach the built-in judge, decided at start (issue 22 section 1),
 * when neither BASE_URL nor JUDGE_URL is set and the listener is not on
 * loopback only:
 *
 * - on loopback only (HOST=127.0.0.1, every other e2e test) nothing is
 *   judged: no `judge_reachable`, no warning;
 * - on every address (HOST=0.0.0.0) of a machine without a public address:
 *   the start warns loudly naming BASE_URL, the ready line and /health say
 *   `this machine only`, a check of proxies on this machine has no warning
 *   and one with a proxy elsewhere gets `metadata.warnings` `judge_local_only`
 *   (response and result file), answered and charged as any check;
 * - on a machine with a public address on its default route the judge is there.
 *
 * Every response is checked against the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startHttpProxy } from '../fixtures/fake-proxies';
import type { FakeServer } from '../fixtures/fake-servers';
import { judgeAddress } from '../../src/judge/judge-address';
import { localAddresses } from '../../src/judge/local-addresses';
import { checkedCall } from '../helpers/openapi-check';
import { startTestService, type TestService } from '../helpers/service';

const here = judgeAddress({ judgeUrl: undefined, baseUrl: 'http://127.0.0.1:0', baseUrlSet: false, listenHost: '0.0.0.0', local: localAddresses() });

test('on loopback only: nothing judged, no warning', async () => {
  const t = await startTestService({ BOOTSTRAP_CHECKS: '10' });
  try {
    expect((await checkedCall(`${t.url}/health`)).body.judge_reachable).toBeUndefined();
    expect(t.logs.find((l) => l.msg === 'ready')).toMatchObject({ judge: `${t.url}/judge`, judgeFrom: 'HOST (loopback only)' });
    const r = await checkedCall(`${t.url}/check`, { method: 'POST', headers: { 'x-api-key': t.key }, json: { proxies: ['proxy.invalid:8080'], timeout: 1000 } });
    expect(r.status).toBe(200);
    expect(r.body.metadata.warnings).toBeUndefined();
  } finally {
    await t.stop();
  }
});

describe.skipIf(here.reach === 'public')('the judge on every address of a machine without a public address', () => {
  let t: TestService;
  let proxy: FakeServer;
  beforeAll(async () => {
    t = await startTestService({ HOST: '0.0.0.0', BOOTSTRAP_CHECKS: '100' });
    proxy = await startHttpProxy();
  });
  afterAll(async () => {
    await proxy?.close();
    await t?.stop();
  });

  test('a loud warning at start naming BASE_URL; /health and the ready line agree', async () => {
    const warn = t.logs.find((l) => String(l.msg).startsWith('THE JUDGE IS REACHABLE FROM THIS MACHINE ONLY'));
    expect(warn).toMatchObject({ level: 'warn', judgeReachable: 'this machine only', from: 'no public address on this machine' });
    expect(String(warn!.msg)).toContain('BASE_URL');
    expect((await checkedCall(`${t.url}/health`)).body.judge_reachable).toBe('this machine only');
    expect(t.logs.find((l) => l.msg === 'ready')).toMatchObject({ judgeReachable: 'this machine only', judgeFrom: 'no public address on this machine' });
  });

  test('a check of proxies on this machine: no warning; with one elsewhere: judge_local_only in the response and the file', async () => {
    const headers = { 'x-api-key': t.key };
    const local = await checkedCall(`${t.url}/check`, { method: 'POST', headers, json: { proxies: [`127.0.0.1:${proxy.port}`] } });
    expect(local.status).toBe(200);
    expect(local.body.metadata.warnings).toBeUndefined();
    expect(local.body.summary.total_working).toBe(1);

    const mixed = await checkedCall(`${t.url}/check`, { method: 'POST', headers, json: { proxies: [`127.0.0.1:${proxy.port}`, 'proxy.invalid:8080'], timeout: 1000 } });
    expect(mixed.status).toBe(200);
    expect(mixed.body.metadata.warnings).toEqual([{ code: 'judge_local_only', message: expect.stringContaining('BASE_URL') }]);
    expect(mixed.body.metadata.warnings[0].message).toContain(`${t.url}/judge`);
    const file = await checkedCall(mixed.body.result_url);
    expect(file.body.metadata.warnings).toEqual(mixed.body.metadata.warnings);
  });
});

describe.if(here.reach === 'public')('the judge on every address of a machine with a public address', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ HOST: '0.0.0.0' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  test('the judge is at the default route\'s address, said in the ready line; /health says public', async () => {
    expect(t.logs.find((l) => l.msg === 'ready')).toMatchObject({ judge: `http://${here.host}:${t.service.port}/judge`, judgeReachable: 'public' });
    expect((await checkedCall(`${t.url}/health`)).body.judge_reachable).toBe('public');
  });
});
