/**
 * One way to start each daemon of the zoo on loopback (daemons.ts runs them,
 * configs.ts writes their files): squid, tinyproxy, danted, microsocks, with
 * the options the configs take. The gateway's interop tests and
 * bench/gateway.ts start theirs here.
 */
import { danteConf, microsocksArgs, squidConf, SQUID_NCSA_HELPER, tinyproxyConf, type DanteOptions, type SquidOptions, type TinyproxyOptions } from './configs';
import type { SeenRequest } from '../helpers/gateway';
import { findBinary, isRoot, startDaemon, uniqueServiceName, type Requirement, type RunningDaemon } from './daemons';

export interface ZooSquidOptions extends Partial<Omit<SquidOptions, 'port' | 'dir' | 'asRoot' | 'htpasswd' | 'ncsaHelper'>> {
  /** An htpasswd line (credentials.ts htpasswdLine): basic auth for every request. */
  htpasswd?: string;
  /** Lines appended to the config. */
  extra?: string[];
}

export function startSquid(name: string, o: ZooSquidOptions = {}): Promise<RunningDaemon> {
  const { htpasswd, extra, ...rest } = o;
  return startDaemon({
    name: `squid ${name}`,
    bin: findBinary('squid') as string,
    files: (dir, port) => ({
      'squid.conf':
        squidConf({
          port,
          dir,
          forwardedFor: 'on',
          via: true,
          asRoot: isRoot(),
          ...rest,
          ...(htpasswd === undefined ? {} : { htpasswd: `${dir}/htpasswd`, ncsaHelper: SQUID_NCSA_HELPER }),
        }) + (extra ?? []).map((l) => `${l}\n`).join(''),
      ...(htpasswd === undefined ? {} : { htpasswd }),
    }),
    // -n: a service name of its own, so its shared-memory segments are its own (daemons.ts header)
    args: (dir) => ['-N', '-n', uniqueServiceName(), '-f', `${dir}/squid.conf`],
    logFiles: ['cache.log'],
  });
}

export function startTinyproxy(name: string, o: Partial<Omit<TinyproxyOptions, 'port' | 'dir' | 'asRoot'>> = {}): Promise<RunningDaemon> {
  return startDaemon({
    name: `tinyproxy ${name}`,
    bin: findBinary('tinyproxy') as string,
    files: (dir, port) => ({ 'tinyproxy.conf': tinyproxyConf({ port, dir, asRoot: isRoot(), ...o }) }),
    args: (dir) => ['-d', '-c', `${dir}/tinyproxy.conf`],
  });
}

export function startDante(name: string, o: Omit<DanteOptions, 'port' | 'asRoot'> = { method: 'none' }): Promise<RunningDaemon> {
  return startDaemon({
    name: `danted ${name}`,
    bin: findBinary('danted') as string,
    files: (_dir, port) => ({ 'danted.conf': danteConf({ port, asRoot: isRoot(), ...o }) }),
    args: (dir) => ['-f', `${dir}/danted.conf`, '-p', `${dir}/danted.pid`, '-N', '1'],
  });
}

export function startMicrosocks(name: string, auth?: { user: string; password: string }): Promise<RunningDaemon> {
  return startDaemon({ name: `microsocks ${name}`, bin: findBinary('microsocks') as string, args: (_dir, port) => microsocksArgs(port, auth) });
}

/** What the gateway's interop tests need: the three daemons of its pools and curl. */
export const GATEWAY_ZOO: Requirement[] = [
  { pkg: 'squid', bin: 'squid' },
  { pkg: 'tinyproxy', bin: 'tinyproxy' },
  { pkg: 'dante-server', bin: 'danted' },
  { pkg: 'curl', bin: 'curl' },
];

/** The address the gateway tests' dante leaves from (its `external`), so a target can tell it apart. */
export const DANTE_SOURCE = '127.0.0.2';

/** Which daemon a request reached the target through: squid and tinyproxy by their Via, dante by its source address. */
export function throughWhom(s: SeenRequest): string {
  if (s.via?.includes('squid')) return 'squid';
  if (s.via?.includes('tinyproxy')) return 'tinyproxy';
  if (s.peer.endsWith(DANTE_SOURCE)) return 'dante';
  return `unknown (via ${s.via}, peer ${s.peer})`;
}
