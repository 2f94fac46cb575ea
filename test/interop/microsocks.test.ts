/**
 * Interop: the probe engine against real microsocks (Debian package
 * `microsocks`, SOCKS5 only), two instances on loopback: no auth and -u/-P,
 * against the plain-HTTP and the https judge (TLS through the tunnel).
 * Also: http and socks4 probes to it must fail (no false positive). The
 * `socks` package, as an independent client (socks-reference.ts), must reach
 * the same verdict as our probe for every SOCKS case, and the judge must see
 * it come from the same address our probe reports.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SOCKS_ANSWER_MESSAGES } from '../../src/probe/codec/socks-answer';
import {
  findBinary,
  missingPackages,
  missingReason,
  reportUnavailable,
  startDaemon,
  stopAllDaemons,
  type RunningDaemon,
} from './daemons';
import { microsocksArgs } from './configs';
import { randomPassword } from './credentials';
import { agreement, bothAgree, bothThrough } from './socks-reference';
import { autoProbeThrough, failed, probeThrough, startInteropJudge, startInteropTlsJudge, verdictOf, working, type Creds, type InteropJudge } from './verdict';

const missing = missingPackages([{ pkg: 'microsocks', bin: 'microsocks' }]);

function startMicrosocks(name: string, auth?: Creds): Promise<RunningDaemon> {
  return startDaemon({
    name: `microsocks ${name}`,
    bin: findBinary('microsocks') as string,
    args: (_dir, port) => microsocksArgs(port, auth),
  });
}

if (missing.length > 0) {
  reportUnavailable('microsocks', missingReason(missing));
} else {
  describe('microsocks (real daemon)', () => {
    const creds: Creds = { user: 'carol', password: randomPassword() };
    let judge: InteropJudge;
    let tlsJudge: InteropJudge;
    let open: RunningDaemon;
    let authed: RunningDaemon;

    beforeAll(async () => {
      [judge, tlsJudge] = await Promise.all([startInteropJudge(), startInteropTlsJudge()]);
      [open, authed] = await Promise.all([startMicrosocks('no auth'), startMicrosocks('-u/-P', creds)]);
    }, 20_000);

    afterAll(async () => {
      await stopAllDaemons();
      await Promise.all([judge?.close(), tlsJudge?.close()]);
    }, 15_000);

    test('no auth: SOCKS5 -> working, elite', async () => {
      const r = await probeThrough('socks5', open, judge);
      expect(verdictOf(r)).toEqual(working('elite'));
      expect(r.origin).toBe('127.0.0.1');
    });

    test('-u/-P, right credentials -> working, elite', async () => {
      expect(verdictOf(await probeThrough('socks5', authed, judge, creds))).toEqual(working('elite'));
    });

    test('-u/-P, no credentials -> failed auth_required', async () => {
      expect(verdictOf(await probeThrough('socks5', authed, judge))).toEqual(failed('auth_required'));
    });

    test('-u/-P, wrong password -> failed auth_required', async () => {
      expect(verdictOf(await probeThrough('socks5', authed, judge, { ...creds, password: `${creds.password}x` }))).toEqual(
        failed('auth_required'),
      );
    });

    test('https judge, TLS through the SOCKS5 tunnel (no auth and -u/-P) -> working, elite', async () => {
      const [open5, authed5] = await Promise.all([probeThrough('socks5', open, tlsJudge), probeThrough('socks5', authed, tlsJudge, creds)]);
      expect(verdictOf(open5)).toEqual(working('elite'));
      expect(verdictOf(authed5)).toEqual(working('elite'));
    });

    test('type auto -> working, protocols ["socks5"]; -u/-P without credentials -> auth_required from socks5', async () => {
      const [openR, authR, noAuth] = await Promise.all([
        autoProbeThrough(open, judge),
        autoProbeThrough(authed, judge, creds),
        autoProbeThrough(authed, judge),
      ]);
      expect(verdictOf(openR)).toEqual(working('elite'));
      expect(openR.protocols).toEqual(['socks5']);
      expect(verdictOf(authR)).toEqual(working('elite'));
      expect(authR.protocols).toEqual(['socks5']);
      expect(verdictOf(noAuth)).toEqual(failed('auth_required'));
      expect(noAuth.error?.message.startsWith('socks5: ')).toBe(true);
      expect(noAuth.protocols).toEqual([]);
    });

    // microsocks answers anything that is not a SOCKS5 greeting with the bytes 05 ff
    test('socks4 probe (microsocks speaks SOCKS5 only) -> failed bad_response, never working', async () => {
      expect(verdictOf(await probeThrough('socks4', open, judge, undefined, 1_000))).toEqual(failed('bad_response'));
    });

    test('http probe to the SOCKS port -> failed bad_response, never working; the message says it answered like SOCKS5', async () => {
      const r = await probeThrough('http', open, judge, undefined, 1_000);
      expect(verdictOf(r)).toEqual(failed('bad_response'));
      expect(r.error?.message).toBe(SOCKS_ANSWER_MESSAGES.socks5);
    });

    const cases: [string, 'socks4' | 'socks5', () => RunningDaemon, 'http' | 'https', Creds | undefined, boolean][] = [
      ['no auth: SOCKS5 -> both working', 'socks5', () => open, 'http', undefined, true],
      ['no auth: SOCKS5, https judge -> both working', 'socks5', () => open, 'https', undefined, true],
      ['no auth: SOCKS4 -> both fail', 'socks4', () => open, 'http', undefined, false],
      ['-u/-P, right credentials -> both working', 'socks5', () => authed, 'http', creds, true],
      ['-u/-P, right credentials, https judge -> both working', 'socks5', () => authed, 'https', creds, true],
      ['-u/-P, no credentials -> both fail', 'socks5', () => authed, 'http', undefined, false],
      ['-u/-P, wrong password -> both fail', 'socks5', () => authed, 'http', { ...creds, password: `${creds.password}x` }, false],
    ];
    for (const [name, type, daemon, scheme, auth, works] of cases) {
      test(`the socks package agrees: ${name}`, async () => {
        expect(agreement(await bothThrough(type, daemon(), scheme === 'https' ? tlsJudge : judge, auth))).toEqual(bothAgree(works));
      });
    }
  });
}
