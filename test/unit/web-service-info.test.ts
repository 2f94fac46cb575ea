/** Tests for src/web/client/service-info.ts: one machine or a cluster, the judge banner, the region card, a check's warnings. */
import { describe, expect, test } from 'bun:test';
import { checkWarnings, gatewayOf, judgeBanner, regionCard, serviceInfo, UNKNOWN_SERVICE } from '../../src/web/client/service-info';

describe('serviceInfo', () => {
  test("one process: no agents in /health; a cluster's API node lists them", () => {
    expect(serviceInfo({ status: 'ok', regions: 19, database: 'ok' })).toEqual({ cluster: false, judgeReach: null });
    expect(serviceInfo({ status: 'ok', agents: [] })).toEqual({ cluster: true, judgeReach: null });
    expect(serviceInfo(null)).toBe(UNKNOWN_SERVICE);
    expect(serviceInfo('oops')).toBe(UNKNOWN_SERVICE);
  });

  test('judge_reachable that limits who reaches the judge gives a banner naming the settings; anything else none', () => {
    const info = serviceInfo({ status: 'ok', judge_reachable: 'this machine only' });
    expect(info.judgeReach).toBe('this machine only');
    expect(judgeBanner(info)).toBe(
      "This service's judge is reachable from this machine only: every proxy on another machine will fail its check. The operator sets BASE_URL (or JUDGE_URL) to an address the proxies can reach.",
    );
    expect(judgeBanner(serviceInfo({ judge_reachable: 'public' }))).toBeNull();
    expect(judgeBanner(serviceInfo({ judge_reachable: true }))).toBeNull();
    expect(judgeBanner(serviceInfo({}))).toBeNull();
  });
});

describe('gatewayOf', () => {
  test("/health's gateway (host null: the API's host), else null", () => {
    expect(gatewayOf({ gateway: { host: null, port: 47002 } })).toEqual({ host: null, port: 47002 });
    expect(gatewayOf({ gateway: { host: '10.0.0.5', port: 8000 } })).toEqual({ host: '10.0.0.5', port: 8000 });
    expect(gatewayOf({ status: 'ok' })).toBeNull();
    expect(gatewayOf({ gateway: { host: null, port: 0 } })).toBeNull();
    expect(gatewayOf({ gateway: 'x' })).toBeNull();
    expect(gatewayOf(null)).toBeNull();
  });
});

describe('regionCard', () => {
  const meta = { region_used: 'de1', region_name: 'Frankfurt, Germany' };
  test('one machine: the code, probed from this machine; a cluster: the name', () => {
    expect(regionCard(meta, UNKNOWN_SERVICE)).toBe('de1, probed from this machine');
    expect(regionCard(meta, { cluster: true, judgeReach: null })).toBe('Frankfurt, Germany');
    expect(regionCard({}, UNKNOWN_SERVICE)).toBe('this machine');
    expect(regionCard({ region_used: 'de1' }, { cluster: true, judgeReach: null })).toBe('de1');
  });
});

describe('checkWarnings', () => {
  test('strings as they are, objects by message or code, anything else dropped', () => {
    expect(checkWarnings({ warnings: ['a', { code: 'judge_local', message: 'b' }, { code: 'c' }, 3, null, '', {}] })).toEqual(['a', 'b', 'c']);
    expect(checkWarnings({})).toEqual([]);
    expect(checkWarnings(undefined)).toEqual([]);
    expect(checkWarnings({ warnings: 'x' })).toEqual([]);
  });
});
