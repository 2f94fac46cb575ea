/**
 * Interop: the probe engine against real squid (Debian package `squid`), four
 * instances on loopback: forwarded_for on / off / delete+via off / basic auth.
 * Each against the plain-HTTP judge (absolute-form GET) and the https judge
 * (CONNECT, TLS through the tunnel). The https check (settings.tlsJudge, the
 * TLS judge pinned): CONNECT allowed -> https true; a fifth squid with
 * `http_access deny CONNECT` to the TLS judge's port -> working, https false.
 * Also: SOCKS probes to squid's HTTP port must fail (no false positive).
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
  uniqueServiceName,
  type RunningDaemon,
} from './daemons';
import { squidConf, SQUID_NCSA_HELPER, type SquidForwardedFor } from './configs';
import { htpasswdLine, randomPassword } from './credentials';
import { autoProbeThrough, failed, httpsProbeThrough, pinnedTlsJudge, probeThrough, startInteropJudge, startInteropTlsJudge, verdictOf, working, type InteropJudge } from './verdict';

const missing = missingPackages([
  { pkg: 'squid', bin: 'squid' },
  { pkg: 'openssl', bin: 'openssl' },
]);

function startSquid(name: string, forwardedFor: SquidForwardedFor, via: boolean, auth?: { line: string }, denyConnectPorts?: number[]): Promise<RunningDaemon> {
  const bin = findBinary('squid') as string;
  return startDaemon({
    name: `squid ${name}`,
    bin,
    files: (dir, port) => ({
      'squid.conf': squidConf({
        port,
        dir,
        forwardedFor,
        via,
        asRoot: isRoot(),
        ...(auth === undefined ? {} : { htpasswd: `${dir}/htpasswd`, ncsaHelper: SQUID_NCSA_HELPER }),
        ...(denyConnectPorts === undefined ? {} : { denyConnectPorts }),
      }),
      ...(auth === undefined ? {} : { htpasswd: auth.line }),
    }),
    // -n: a service name of its own, so its shared-memory segments are its own (daemons.ts header)
    args: (dir) => ['-N', '-n', uniqueServiceName(), '-f', `${dir}/squid.conf`],
    logFiles: ['cache.log'],
  });
}

if (missing.length > 0) {
  reportUnavailable('squid', missingReason(missing));
} else {
  describe('squid (real daemon)', () => {
    const user = 'alice';
    const password = randomPassword();
    let judge: InteropJudge;
    let tlsJudge: InteropJudge;
    let xffOn: RunningDaemon;
    let xffOff: RunningDaemon;
    let stealth: RunningDaemon;
    let authed: RunningDaemon;
    let noConnect: RunningDaemon;

    beforeAll(async () => {
      [judge, tlsJudge] = await Promise.all([startInteropJudge(), startInteropTlsJudge()]);
      const line = htpasswdLine(user, password);
      [xffOn, xffOff, stealth, authed, noConnect] = await Promise.all([
        startSquid('forwarded_for=on', 'on', true),
        startSquid('forwarded_for=off', 'off', true),
        startSquid('forwarded_for=delete via=off', 'delete', false),
        startSquid('basic auth', 'on', true, { line }),
        startSquid('deny CONNECT to the TLS judge', 'delete', false, undefined, [tlsJudge.target.port]),
      ]);
    }, 25_000);

    afterAll(async () => {
      await stopAllDaemons();
      await Promise.all([judge?.close(), tlsJudge?.close()]);
    }, 15_000);

    test('forwarded_for on: X-Forwarded-For carries the client address -> working, transparent', async () => {
      const r = await probeThrough('http', xffOn, judge);
      expect(verdictOf(r)).toEqual(working('transparent'));
      expect(r.origin).toBe('127.0.0.1');
    });

    test('forwarded_for off: X-Forwarded-For "unknown" + Via -> working, anonymous', async () => {
      expect(verdictOf(await probeThrough('http', xffOff, judge))).toEqual(working('anonymous'));
    });

    test('forwarded_for delete + via off -> working, elite', async () => {
      expect(verdictOf(await probeThrough('http', stealth, judge))).toEqual(working('elite'));
    });

    test('basic auth, right credentials -> working, transparent (forwarded_for on)', async () => {
      expect(verdictOf(await probeThrough('http', authed, judge, { user, password }))).toEqual(working('transparent'));
    });

    test('basic auth, no credentials -> failed auth_required (407)', async () => {
      expect(verdictOf(await probeThrough('http', authed, judge))).toEqual(failed('auth_required', 407));
    });

    test('basic auth, wrong password -> failed auth_required (407)', async () => {
      expect(verdictOf(await probeThrough('http', authed, judge, { user, password: `${password}x` }))).toEqual(
        failed('auth_required', 407),
      );
    });

    test('https judge through CONNECT (forwarded_for on): nothing added inside TLS -> working, elite', async () => {
      expect(verdictOf(await probeThrough('http', xffOn, tlsJudge))).toEqual(working('elite'));
    });

    test('basic auth, https judge through CONNECT: right credentials -> working, elite; none -> auth_required (407)', async () => {
      const [ok, none] = await Promise.all([
        probeThrough('http', authed, tlsJudge, { user, password }),
        probeThrough('http', authed, tlsJudge),
      ]);
      expect(verdictOf(ok)).toEqual(working('elite'));
      expect(verdictOf(none)).toEqual(failed('auth_required', 407));
    });

    test('the https check: CONNECT allowed -> https true (with credentials too); CONNECT denied to the TLS judge port -> working, https false', async () => {
      const pinned = pinnedTlsJudge(tlsJudge);
      const [open, auth, denied] = await Promise.all([
        httpsProbeThrough('http', stealth, judge, pinned),
        httpsProbeThrough('http', authed, judge, pinned, { user, password }),
        httpsProbeThrough('http', noConnect, judge, pinned),
      ]);
      expect(verdictOf(open)).toEqual(working('elite'));
      expect(open.https).toBe(true);
      expect(verdictOf(auth)).toEqual(working('transparent'));
      expect(auth.https).toBe(true);
      expect(verdictOf(denied)).toEqual(working('elite'));
      expect(denied.https).toBe(false);
      // the deny rule is real: the https judge itself through CONNECT is refused (403)
      expect(verdictOf(await probeThrough('http', noConnect, tlsJudge))).toEqual(failed('http_status', 403));
    });

    // auto: the http attempt passes; the SOCKS attempts wait for a request line to the end of the budget
    test('type auto -> working, protocols ["http"] (type http), the SOCKS attempts never pass', async () => {
      const [plain, auth, noAuth] = await Promise.all([
        autoProbeThrough(stealth, judge, undefined, 1_500),
        autoProbeThrough(authed, judge, { user, password }, 1_500),
        autoProbeThrough(authed, judge, undefined, 1_500),
      ]);
      expect(verdictOf(plain)).toEqual(working('elite'));
      expect(plain.protocols).toEqual(['http']);
      expect(verdictOf(auth)).toEqual(working('transparent'));
      expect(auth.protocols).toEqual(['http']);
      expect(verdictOf(noAuth)).toEqual(failed('auth_required', 407));
      expect(noAuth.protocols).toEqual([]);
    });

    test('socks4 and socks5 probes to the HTTP port -> failed timeout, never working', async () => {
      // squid waits for the end of a request line that SOCKS bytes never bring
      const [s5, s4] = await Promise.all([
        probeThrough('socks5', stealth, judge, undefined, 1_000),
        probeThrough('socks4', stealth, judge, undefined, 1_000),
      ]);
      expect(verdictOf(s5)).toEqual(failed('timeout'));
      expect(verdictOf(s4)).toEqual(failed('timeout'));
    });
  });
}
