/**
 * One way to start each daemon of the zoo on loopback (daemons.ts runs them,
 * configs.ts writes their files): squid, tinyproxy, danted, microsocks, with
 * the options the configs take. The gateway's interop tests and
 * bench/gateway.ts start theirs here.
 */
import { danteConf, microsocksArgs, squidConf, SQUID_NCSA_HELPER, tinyproxyConf, type DanteOptions, type SquidOptions, type TinyproxyOptions } from './configs';
import { findBinary, isRoot, startDaemon, uniqueServiceName, type RunningDaemon } from './daemons';

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
