/**
 * An independent SOCKS client for the interop tests: the `socks` package
 * (SocksClient.createConnection) opens the tunnel, then a hand-written
 * HTTP/1.1 GET (over TLS for the https judge) asks the judge who it sees.
 * Nothing here uses the service's SOCKS codec, its HTTP request/response code
 * or its judge-body reader, so when our probe and this client agree on a real
 * daemon, the agreement is not our code agreeing with itself.
 *
 * `bothThrough` runs our probe (verdict.ts probeThrough) and the reference on
 * the same daemon, judge and credentials, at the same time.
 */
import { randomBytes } from 'node:crypto';
import { isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { SocksClient } from 'socks';
import { errorText } from '../../src/errors';
import type { ProbeResult } from '../../src/probe/types';
import type { RunningDaemon } from './daemons';
import { PROBE_TIMEOUT_MS, probeThrough, type Creds, type InteropJudge } from './verdict';

/** What the reference client got: ok with the judge's view of our address, or the first error. */
export type ReferenceOutcome = { ok: true; origin: string } | { ok: false; error: string };

/** Reads the whole answer (the judge closes after it) within the budget. */
function readAll(sock: Socket, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no complete judge answer within ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('data', (d: Buffer) => parts.push(d));
    sock.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.once('close', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(parts));
    });
  });
}

/** Wraps the tunnel in TLS (the https judge: the test CA, the judge's IP checked against the certificate). */
function secure(tunnel: Socket, judge: InteropJudge): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const host = judge.target.host;
    const tls = tlsConnect({ socket: tunnel, ca: judge.tlsCa, ...(isIP(host) === 0 ? { servername: host } : {}) });
    tls.once('secureConnect', () => resolve(tls));
    tls.once('error', reject);
  });
}

/** The judge's echo -> the address it saw, checked against the nonce we sent. */
function originFrom(answer: Buffer, nonce: string): string {
  const text = answer.toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  if (split === -1) throw new Error(`no HTTP head in ${JSON.stringify(text.slice(0, 80))}`);
  const status = text.slice(0, text.indexOf('\r\n'));
  if (!/^HTTP\/1\.[01] 200 /.test(status)) throw new Error(`judge answered ${JSON.stringify(status)}`);
  const echo = JSON.parse(text.slice(split + 4)) as { nonce?: unknown; remoteAddress?: unknown };
  if (echo.nonce !== nonce) throw new Error(`judge echoed nonce ${JSON.stringify(echo.nonce)}, sent ${nonce}`);
  if (typeof echo.remoteAddress !== 'string') throw new Error('judge echo without remoteAddress');
  return echo.remoteAddress;
}

/** One GET to the judge through `daemon` with the `socks` package as the SOCKS client. */
export async function referenceThrough(
  type: 'socks4' | 'socks5',
  daemon: RunningDaemon,
  judge: InteropJudge,
  creds?: Creds,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<ReferenceOutcome> {
  let sock: Socket | undefined;
  try {
    const { socket } = await SocksClient.createConnection({
      command: 'connect',
      proxy: {
        host: daemon.host,
        port: daemon.port,
        type: type === 'socks4' ? 4 : 5,
        ...(creds === undefined ? {} : { userId: creds.user, password: creds.password }),
      },
      destination: { host: judge.target.host, port: judge.target.port },
      timeout: timeoutMs,
    });
    sock = judge.target.protocol === 'https:' ? await secure(socket, judge) : socket;
    const nonce = randomBytes(12).toString('hex');
    const path = `${judge.target.path}${judge.target.path.includes('?') ? '&' : '?'}n=${nonce}`;
    const answer = readAll(sock, timeoutMs);
    sock.write(`GET ${path} HTTP/1.1\r\nHost: ${judge.target.host}:${judge.target.port}\r\nConnection: close\r\n\r\n`);
    return { ok: true, origin: originFrom(await answer, nonce) };
  } catch (err) {
    return { ok: false, error: errorText(err) };
  } finally {
    sock?.destroy();
  }
}

/** Our probe and the reference client through the same daemon to the same judge. */
export async function bothThrough(
  type: 'socks4' | 'socks5',
  daemon: RunningDaemon,
  judge: InteropJudge,
  creds?: Creds,
): Promise<{ probe: ProbeResult; reference: ReferenceOutcome }> {
  const [probe, reference] = await Promise.all([probeThrough(type, daemon, judge, creds), referenceThrough(type, daemon, judge, creds)]);
  return { probe, reference };
}

/** The two outcomes side by side, shaped for one toEqual: success of each, and where each saw us come from. */
export function agreement(r: { probe: ProbeResult; reference: ReferenceOutcome }): {
  probe: { working: boolean; origin: string | null };
  reference: { working: boolean; origin: string | null };
} {
  return {
    probe: { working: r.probe.status === 'working', origin: r.probe.origin },
    reference: { working: r.reference.ok, origin: r.reference.ok ? r.reference.origin : null },
  };
}

/** The agreement expected: both work and the judge saw both come from `origin`, or both fail. */
export function bothAgree(working: boolean, origin = '127.0.0.1'): ReturnType<typeof agreement> {
  const side = { working, origin: working ? origin : null };
  return { probe: side, reference: side };
}
