/**
 * Interop: the probe engine against real tinyproxy (Debian package
 * `tinyproxy`), four instances on loopback: default / XTinyproxy Yes /
 * DisableViaHeader Yes / BasicAuth, against the plain-HTTP judge and the https
 * judge (CONNECT). The https check (settings.tlsJudge, pinned): CONNECT to
 * any port (tinyproxy's default) -> https true; a fifth instance with
 * `ConnectPort 443` only -> working, https false. Also: SOCKS probes to its
 * HTTP port must fail (no false positive).
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
import { tinyproxyConf, type TinyproxyOptions } from './configs';
import { randomPassword } from './credentials';
import { autoProbeThrough, failed, httpsProbeThrough, pinnedTlsJudge, probeThrough, startInteropJudge, startInteropTlsJudge, verdictOf, working, type InteropJudge } from './verdict';

const missing = missingPackages([{ pkg: 'tinyproxy', bin: 'tinyproxy' }]);

type Variant = Omit<TinyproxyOptions, 'port' | 'dir' | 'asRoot'>;

function startTinyproxy(name: string, variant: Variant): Promise<RunningDaemon> {
  return startDaemon({
    name: `tinyproxy ${name}`,
    bin: findBinary('tinyproxy') as string,
    files: (dir, port) => ({ 'tinyproxy.conf': tinyproxyConf({ port, dir, asRoot: isRoot(), ...variant }) }),
    args: (dir) => ['-d', '-c', `${dir}/tinyproxy.conf`],
  });
}

if (missing.length > 0) {
  reportUnavailable('tinyproxy', missingReason(missing));
} else {
  describe('tinyproxy (real daemon)', () => {
    const user = 'bob';
    const password = randomPassword();
    let judge: InteropJudge;
    let tlsJudge: InteropJudge;
    let plain: RunningDaemon;
    let xTiny: RunningDaemon;
    let noVia: RunningDaemon;
    let authed: RunningDaemon;
    let port443: RunningDaemon;

    beforeAll(async () => {
      [judge, tlsJudge] = await Promise.all([startInteropJudge(), startInteropTlsJudge()]);
      [plain, xTiny, noVia, authed, port443] = await Promise.all([
        startTinyproxy('default', {}),
        startTinyproxy('XTinyproxy Yes', { xTinyproxy: true }),
        startTinyproxy('DisableViaHeader Yes', { disableVia: true }),
        startTinyproxy('BasicAuth', { basicAuth: { user, password } }),
        startTinyproxy('ConnectPort 443', { connectPorts: [443] }),
      ]);
    }, 25_000);

    afterAll(async () => {
      await stopAllDaemons();
      await Promise.all([judge?.close(), tlsJudge?.close()]);
    }, 15_000);

    test('default: Via header -> working, anonymous', async () => {
      const r = await probeThrough('http', plain, judge);
      expect(verdictOf(r)).toEqual(working('anonymous'));
      expect(r.origin).toBe('127.0.0.1');
    });

    test('XTinyproxy Yes: X-Tinyproxy carries the client address -> working, transparent', async () => {
      expect(verdictOf(await probeThrough('http', xTiny, judge))).toEqual(working('transparent'));
    });

    test('DisableViaHeader Yes: nothing added -> working, elite', async () => {
      expect(verdictOf(await probeThrough('http', noVia, judge))).toEqual(working('elite'));
    });

    test('DisableViaHeader Yes, credentials it does not ask for: it forwards Proxy-Authorization -> working, anonymous', async () => {
      expect(verdictOf(await probeThrough('http', noVia, judge, { user, password }))).toEqual(working('anonymous'));
    });

    test('BasicAuth, right credentials -> working, anonymous (Via)', async () => {
      expect(verdictOf(await probeThrough('http', authed, judge, { user, password }))).toEqual(working('anonymous'));
    });

    test('BasicAuth, no credentials -> failed auth_required (407)', async () => {
      expect(verdictOf(await probeThrough('http', authed, judge))).toEqual(failed('auth_required', 407));
    });

    test('BasicAuth, wrong password -> failed auth_required (tinyproxy answers 401, not 407)', async () => {
      const r = await probeThrough('http', authed, judge, { user, password: `${password}x` });
      expect(verdictOf(r)).toEqual(failed('auth_required', 401));
    });

    test('https judge through CONNECT (XTinyproxy Yes): nothing added inside TLS -> working, elite', async () => {
      expect(verdictOf(await probeThrough('http', xTiny, tlsJudge))).toEqual(working('elite'));
    });

    test('BasicAuth, https judge through CONNECT: right credentials -> working, elite; none -> auth_required (407)', async () => {
      const [ok, none] = await Promise.all([
        probeThrough('http', authed, tlsJudge, { user, password }),
        probeThrough('http', authed, tlsJudge),
      ]);
      expect(verdictOf(ok)).toEqual(working('elite'));
      expect(verdictOf(none)).toEqual(failed('auth_required', 407));
    });

    test('the https check: CONNECT to any port -> https true (with BasicAuth too); ConnectPort 443 only -> working, https false', async () => {
      const pinned = pinnedTlsJudge(tlsJudge);
      const [open, auth, restricted] = await Promise.all([
        httpsProbeThrough('http', noVia, judge, pinned),
        httpsProbeThrough('http', authed, judge, pinned, { user, password }),
        httpsProbeThrough('http', port443, judge, pinned),
      ]);
      expect(verdictOf(open)).toEqual(working('elite'));
      expect(open.https).toBe(true);
      expect(verdictOf(auth)).toEqual(working('anonymous'));
      expect(auth.https).toBe(true);
      expect(verdictOf(restricted)).toEqual(working('anonymous'));
      expect(restricted.https).toBe(false);
      // the restriction is real: the https judge itself through CONNECT is refused
      expect((await probeThrough('http', port443, tlsJudge)).status).toBe('failed');
    });

    test('type auto -> working, protocols ["http"]; BasicAuth without credentials -> auth_required (407)', async () => {
      const [plainR, authR, noAuth] = await Promise.all([
        autoProbeThrough(plain, judge, undefined, 1_500),
        autoProbeThrough(authed, judge, { user, password }, 1_500),
        autoProbeThrough(authed, judge, undefined, 1_500),
      ]);
      expect(verdictOf(plainR)).toEqual(working('anonymous'));
      expect(plainR.protocols).toEqual(['http']);
      expect(verdictOf(authR)).toEqual(working('anonymous'));
      expect(authR.protocols).toEqual(['http']);
      expect(verdictOf(noAuth)).toEqual(failed('auth_required', 407));
      expect(noAuth.protocols).toEqual([]);
    });

    // tinyproxy waits for the end of a request line that SOCKS bytes never bring
    test('socks4 and socks5 probes to the HTTP port -> failed timeout, never working', async () => {
      const [s5, s4] = await Promise.all([
        probeThrough('socks5', noVia, judge, undefined, 1_000),
        probeThrough('socks4', noVia, judge, undefined, 1_000),
      ]);
      expect(verdictOf(s5)).toEqual(failed('timeout'));
      expect(verdictOf(s4)).toEqual(failed('timeout'));
    });
  });
}
