/**
 * Interop, a newcomer's mixed list (issue 34, DECISIONS "Mixed lists"):
 * real microsocks (SOCKS5) and tinyproxy (HTTP) on loopback, one list
 * through the whole service with the default type (http):
 *
 * - a line's scheme is its protocol: `socks5://` (and `socks5h://`) is
 *   checked as socks5, `http://` and a bare line as http; the same address
 *   under one protocol twice is one proxy, under two protocols two;
 * - the SOCKS server written without a scheme fails as an http check must,
 *   and its error says it answered like a SOCKS5 server;
 * - every record says the protocol it was checked as; the result's
 *   `.txt?scheme=true` gives `<protocol>://host:port` lines a scraper can use;
 * - /check-raw reads the same list the same way.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SOCKS_ANSWER_MESSAGES } from '../../src/probe/codec/socks-answer';
import { startTestService, type TestService } from '../helpers/service';
import { checkedCall as call, checkedFetch } from '../helpers/openapi-check';
import { missingPackages, missingReason, reportUnavailable, stopAllDaemons, type RunningDaemon } from './daemons';
import { startMicrosocks, startTinyproxy } from './zoo';

const missing = missingPackages([
  { pkg: 'microsocks', bin: 'microsocks' },
  { pkg: 'tinyproxy', bin: 'tinyproxy' },
]);

if (missing.length > 0) {
  reportUnavailable('a mixed list of microsocks and tinyproxy through /check', missingReason(missing));
} else {
  describe('a mixed list (microsocks SOCKS5 + tinyproxy HTTP) through the service, default type', () => {
    let t: TestService;
    let socks: RunningDaemon;
    let http: RunningDaemon;
    const at = (d: RunningDaemon) => `127.0.0.1:${d.port}`;

    beforeAll(async () => {
      [socks, http] = await Promise.all([startMicrosocks('(mixed list)'), startTinyproxy('(mixed list)')]);
      t = await startTestService();
    }, 60_000);

    afterAll(async () => {
      await t?.stop();
      await stopAllDaemons();
    }, 30_000);

    const key = () => ({ 'X-API-Key': t.key });
    const list = () => [
      `socks5://${at(socks)}`,
      at(http),
      `http://${at(http)}`, // the same proxy as the line above: the scheme names the request's type
      `SOCKS5h://${at(socks)}/`, // the same proxy as the first line
      at(socks), // a SOCKS server checked as http: fails, and says why
    ];

    test('POST /check: every working proxy found with no type given; duplicates by protocol; the SOCKS answer explained', async () => {
      const before = (await call(`${t.url}/me`, { headers: key() })).body.user.checks;
      const r = await call(`${t.url}/check`, { method: 'POST', headers: key(), json: { proxies: list(), timeout: 3000 } });
      expect(r.status, r.text).toBe(200);
      expect(r.body.metadata).toMatchObject({ proxy_type: 'http', total_checked: 3, total_duplicates: 2 });
      expect(r.body.summary.total_working).toBe(2);
      expect(before - (await call(`${t.url}/me`, { headers: key() })).body.user.checks).toBe(3);

      const doc: any = await (await checkedFetch(r.body.result_url)).json();
      const records = doc.proxies.map((p: any) => [p.proxy.port, p.type, p.status, p.error?.code ?? null]);
      expect(records).toContainEqual([socks.port, 'socks5', 'working', null]);
      expect(records).toContainEqual([http.port, 'http', 'working', null]);
      expect(records).toContainEqual([socks.port, 'http', 'failed', 'bad_response']);
      const wrong = doc.proxies.find((p: any) => p.proxy.port === socks.port && p.type === 'http');
      expect(wrong.error.message).toBe(SOCKS_ANSWER_MESSAGES.socks5);

      const txt = await (await checkedFetch(`${r.body.result_url.replace('.json?', '.txt?')}&scheme=true`)).text();
      expect(txt.split('\n').filter(Boolean).sort()).toEqual([`http://${at(http)}`, `socks5://${at(socks)}`].sort());
      const plain = await (await checkedFetch(r.body.result_url.replace('.json?', '.txt?'))).text();
      expect(plain.split('\n').filter(Boolean).sort()).toEqual([at(http), at(socks)].sort());
    }, 30_000);

    test('POST /check-raw reads the list the same way (type auto: the bare SOCKS line is found too, the socks5:// one checked as socks5 only)', async () => {
      const r = await call(`${t.url}/check-raw?type=auto&timeout=3000`, { method: 'POST', headers: key(), body: `${list().join('\n')}\n` });
      expect(r.status, r.text).toBe(200);
      expect(r.body.metadata).toMatchObject({ proxy_type: 'auto', total_checked: 4, total_duplicates: 1 });
      expect(r.body.summary.total_working).toBe(4);
      const doc: any = await (await checkedFetch(r.body.result_url)).json();
      const records = doc.proxies.map((p: any) => [p.proxy.port, p.type, p.protocols]);
      expect(records).toContainEqual([socks.port, 'socks5', ['socks5']]);
      expect(records).toContainEqual([http.port, 'http', ['http']]);
      expect(records.filter((x: any) => x[0] === socks.port).length).toBe(2);
      expect(r.body.summary.protocols).toEqual({ http: 2, socks4: 0, socks5: 2 });
    }, 30_000);
  });
}
