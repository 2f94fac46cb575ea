/**
 * Interop: the probe engine against real Dante (Debian package
 * `dante-server`, binary danted), two instances on loopback: no auth (serves
 * SOCKS4 and SOCKS5) and RFC 1929 username/password against the system
 * password file (a temporary system user; root only), against the plain-HTTP
 * and the https judge (TLS through the tunnel). Also: an HTTP probe to the
 * SOCKS port must fail (no false positive). The `socks` package, as an
 * independent client (socks-reference.ts), must reach the same verdict as our
 * probe for every SOCKS case, and the judge must see it come from the same
 * address our probe reports.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import {
  findBinary,
  isRoot,
  missingPackages,
  missingReason,
  reportUnavailable,
  startDaemon,
  stopAllDaemons,
  type RunningDaemon,
} from './daemons';
import { danteConf } from './configs';
import { ensureSystemUser, randomPassword, removeSystemUser, testUserName } from './credentials';
import { agreement, bothAgree, bothThrough } from './socks-reference';
import { autoProbeThrough, failed, probeThrough, startInteropJudge, startInteropTlsJudge, verdictOf, working, type Creds, type InteropJudge } from './verdict';

const missing = missingPackages([{ pkg: 'dante-server', bin: 'danted' }]);
const TEST_USER = testUserName(); // one per run: concurrent runs must not share it

function startDante(name: string, method: 'none' | 'username'): Promise<RunningDaemon> {
  return startDaemon({
    name: `danted ${name}`,
    bin: findBinary('danted') as string,
    files: (_dir, port) => ({ 'danted.conf': danteConf({ port, method, asRoot: isRoot() }) }),
    args: (dir) => ['-f', `${dir}/danted.conf`, '-p', `${dir}/danted.pid`, '-N', '1'],
  });
}

if (missing.length > 0) {
  reportUnavailable('dante', missingReason(missing));
} else {
  describe('dante, no auth (real daemon)', () => {
    let judge: InteropJudge;
    let tlsJudge: InteropJudge;
    let open: RunningDaemon;

    beforeAll(async () => {
      [judge, tlsJudge] = await Promise.all([startInteropJudge(), startInteropTlsJudge()]);
      open = await startDante('socksmethod=none', 'none');
    }, 20_000);

    afterAll(async () => {
      await stopAllDaemons();
      await Promise.all([judge?.close(), tlsJudge?.close()]);
    }, 15_000);

    test('SOCKS5 -> working, elite', async () => {
      const r = await probeThrough('socks5', open, judge);
      expect(verdictOf(r)).toEqual(working('elite'));
      expect(r.origin).toBe('127.0.0.1');
    });

    test('SOCKS4 -> working, elite', async () => {
      expect(verdictOf(await probeThrough('socks4', open, judge))).toEqual(working('elite'));
    });

    test('SOCKS5 with credentials the server does not ask for -> working, elite', async () => {
      expect(verdictOf(await probeThrough('socks5', open, judge, { user: 'any', password: 'thing' }))).toEqual(working('elite'));
    });

    test('https judge, TLS through the SOCKS5 and SOCKS4 tunnels -> working, elite', async () => {
      const [s5, s4] = await Promise.all([probeThrough('socks5', open, tlsJudge), probeThrough('socks4', open, tlsJudge)]);
      expect(verdictOf(s5)).toEqual(working('elite'));
      expect(verdictOf(s4)).toEqual(working('elite'));
    });

    // dante closes the connection on a request that is not SOCKS
    test('http probe to the SOCKS port -> failed connection_closed, never working', async () => {
      expect(verdictOf(await probeThrough('http', open, judge, undefined, 1_000))).toEqual(failed('connection_closed'));
    });

    test('type auto (SOCKS4 and SOCKS5 on one port) -> working, protocols ["socks5", "socks4"], well inside the budget', async () => {
      const t0 = performance.now();
      const r = await autoProbeThrough(open, judge);
      expect(performance.now() - t0).toBeLessThan(1_500);
      expect(verdictOf(r)).toEqual(working('elite'));
      expect(r.protocols).toEqual(['socks5', 'socks4']);
      const tls = await autoProbeThrough(open, tlsJudge);
      expect(verdictOf(tls)).toEqual(working('elite'));
      expect(tls.protocols).toEqual(['socks5', 'socks4']);
    });

    const agreeing: [string, 'socks4' | 'socks5', 'http' | 'https', Creds | undefined][] = [
      ['SOCKS5', 'socks5', 'http', undefined],
      ['SOCKS4', 'socks4', 'http', undefined],
      ['SOCKS5 with credentials the server does not ask for', 'socks5', 'http', { user: 'any', password: 'thing' }],
      ['SOCKS5, https judge', 'socks5', 'https', undefined],
      ['SOCKS4, https judge', 'socks4', 'https', undefined],
    ];
    for (const [name, type, scheme, creds] of agreeing) {
      test(`the socks package agrees: ${name} -> both working, the judge sees the origin our probe reports`, async () => {
        expect(agreement(await bothThrough(type, open, scheme === 'https' ? tlsJudge : judge, creds))).toEqual(bothAgree(true));
      });
    }
  });

  if (!isRoot()) {
    reportUnavailable('dante username auth', 'needs root (creates a system user for the username method; dante reads the shadow file)');
  } else {
    describe('dante, username auth (real daemon)', () => {
      const password = randomPassword();
      let judge: InteropJudge;
      let tlsJudge: InteropJudge;
      let authed: RunningDaemon;

      beforeAll(async () => {
        [judge, tlsJudge] = await Promise.all([startInteropJudge(), startInteropTlsJudge()]);
        ensureSystemUser(TEST_USER, password);
        authed = await startDante('socksmethod=username', 'username');
      }, 20_000);

      afterAll(async () => {
        await stopAllDaemons();
        await Promise.all([judge?.close(), tlsJudge?.close()]);
        removeSystemUser(TEST_USER);
      }, 15_000);

      test('SOCKS5, right credentials -> working, elite', async () => {
        expect(verdictOf(await probeThrough('socks5', authed, judge, { user: TEST_USER, password }))).toEqual(working('elite'));
      });

      test('SOCKS5, no credentials (no acceptable method) -> failed auth_required', async () => {
        expect(verdictOf(await probeThrough('socks5', authed, judge))).toEqual(failed('auth_required'));
      });

      test('SOCKS5, wrong password -> failed auth_required', async () => {
        expect(verdictOf(await probeThrough('socks5', authed, judge, { user: TEST_USER, password: `${password}x` }))).toEqual(
          failed('auth_required'),
        );
      });

      test('https judge, TLS through the authenticated SOCKS5 tunnel -> working, elite', async () => {
        expect(verdictOf(await probeThrough('socks5', authed, tlsJudge, { user: TEST_USER, password }))).toEqual(working('elite'));
      });

      test('SOCKS4 (cannot carry a password) -> failed socks_rejected', async () => {
        expect(verdictOf(await probeThrough('socks4', authed, judge))).toEqual(failed('socks_rejected'));
      });

      const cases: [string, 'socks4' | 'socks5', 'http' | 'https', () => Creds | undefined, boolean][] = [
        ['SOCKS5, right credentials -> both working', 'socks5', 'http', () => ({ user: TEST_USER, password }), true],
        ['SOCKS5, right credentials, https judge -> both working', 'socks5', 'https', () => ({ user: TEST_USER, password }), true],
        ['SOCKS5, no credentials -> both fail', 'socks5', 'http', () => undefined, false],
        ['SOCKS5, wrong password -> both fail', 'socks5', 'http', () => ({ user: TEST_USER, password: `${password}x` }), false],
        ['SOCKS4 -> both fail', 'socks4', 'http', () => undefined, false],
      ];
      for (const [name, type, scheme, creds, works] of cases) {
        test(`the socks package agrees: ${name}`, async () => {
          expect(agreement(await bothThrough(type, authed, scheme === 'https' ? tlsJudge : judge, creds()))).toEqual(bothAgree(works));
        });
      }
    });
  }
}
