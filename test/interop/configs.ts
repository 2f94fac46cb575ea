/**
 * Config text for the interop daemons (pure: strings in, strings out).
 *
 * Every config listens on 127.0.0.1 only, on the port the harness chose, keeps
 * its pid file and logs in the daemon's own temp dir, serves loopback clients
 * only, and (when the tests run as root) drops to an unprivileged user. No
 * cache, no disk state outside that dir, fast shutdown. (What else keeps the
 * daemons apart from other software: daemons.ts, its header.)
 */

export type SquidForwardedFor = 'on' | 'off' | 'delete' | 'transparent' | 'truncate';

export interface SquidOptions {
  port: number;
  dir: string;
  forwardedFor: SquidForwardedFor;
  via: boolean;
  /** Path of an htpasswd file: enables basic auth (basic_ncsa_auth) for every request. */
  htpasswd?: string;
  /** Path of basic_ncsa_auth (Debian: /usr/lib/squid/basic_ncsa_auth). */
  ncsaHelper?: string;
  /** `http_access deny CONNECT` to these ports (before any allow): plain GETs still pass. */
  denyConnectPorts?: number[];
  asRoot: boolean;
}

export const SQUID_NCSA_HELPER = '/usr/lib/squid/basic_ncsa_auth';

export function squidConf(o: SquidOptions): string {
  const lines = [
    `http_port 127.0.0.1:${o.port}`,
    'visible_hostname interop-squid',
    'cache deny all',
    'cache_mem 4 MB',
    'access_log none',
    'cache_store_log none',
    `cache_log ${o.dir}/cache.log`,
    `pid_filename ${o.dir}/squid.pid`,
    `coredump_dir ${o.dir}`,
    // its default journal is /var/spool/squid/netdb.state, shared by every squid on the machine
    'netdb_filename none',
    'pinger_enable off',
    'shutdown_lifetime 0 seconds',
    'dns_timeout 2 seconds',
    `forwarded_for ${o.forwardedFor}`,
    `via ${o.via ? 'on' : 'off'}`,
  ];
  if (o.asRoot) lines.push('cache_effective_user proxy');
  lines.push('http_access deny !localhost');
  if (o.denyConnectPorts !== undefined && o.denyConnectPorts.length > 0) {
    lines.push('acl connect_method method CONNECT', `acl denied_connect_ports port ${o.denyConnectPorts.join(' ')}`, 'http_access deny connect_method denied_connect_ports');
  }
  if (o.htpasswd !== undefined) {
    lines.push(
      `auth_param basic program ${o.ncsaHelper ?? SQUID_NCSA_HELPER} ${o.htpasswd}`,
      'auth_param basic children 2 startup=1 idle=1',
      'auth_param basic realm interop',
      'acl authed proxy_auth REQUIRED',
      'http_access allow authed',
    );
  } else {
    // localhost may CONNECT to any port too: no SSL_ports / Safe_ports rules here
    lines.push('http_access allow localhost');
  }
  lines.push('http_access deny all');
  return `${lines.join('\n')}\n`;
}

export interface TinyproxyOptions {
  port: number;
  dir: string;
  xTinyproxy?: boolean;
  disableVia?: boolean;
  basicAuth?: { user: string; password: string };
  /** `ConnectPort` lines: CONNECT only to these ports (tinyproxy's default: any port). */
  connectPorts?: number[];
  asRoot: boolean;
}

export function tinyproxyConf(o: TinyproxyOptions): string {
  const lines: string[] = [];
  if (o.asRoot) lines.push('User nobody', 'Group nogroup');
  lines.push(
    `Port ${o.port}`,
    'Listen 127.0.0.1',
    'Timeout 30',
    'MaxClients 64',
    'Allow 127.0.0.1',
    `PidFile "${o.dir}/tinyproxy.pid"`,
    'LogLevel Info',
  );
  if (o.xTinyproxy === true) lines.push('XTinyproxy Yes');
  if (o.disableVia === true) lines.push('DisableViaHeader Yes');
  if (o.basicAuth !== undefined) lines.push(`BasicAuth ${o.basicAuth.user} ${o.basicAuth.password}`);
  for (const p of o.connectPorts ?? []) lines.push(`ConnectPort ${p}`);
  return `${lines.join('\n')}\n`;
}

export interface DanteOptions {
  port: number;
  /** 'username' = RFC 1929 checked against the system password file (needs root to read shadow). */
  method: 'none' | 'username';
  asRoot: boolean;
  /** The address dante connects out from (default 127.0.0.1): a target on loopback tells it by its source. */
  external?: string;
}

export function danteConf(o: DanteOptions): string {
  const lines = [
    'logoutput: stderr',
    `internal: 127.0.0.1 port = ${o.port}`,
    `external: ${o.external ?? '127.0.0.1'}`,
    'clientmethod: none',
    `socksmethod: ${o.method}`,
  ];
  if (o.asRoot) lines.push('user.privileged: root', 'user.unprivileged: nobody');
  lines.push(
    'client pass { from: 127.0.0.0/8 to: 0.0.0.0/0 }',
    'client block { from: 0.0.0.0/0 to: 0.0.0.0/0 }',
    'socks pass { from: 127.0.0.0/8 to: 127.0.0.0/8 protocol: tcp }',
    'socks block { from: 0.0.0.0/0 to: 0.0.0.0/0 }',
  );
  return `${lines.join('\n')}\n`;
}

/** microsocks has no config file: its command line. */
export function microsocksArgs(port: number, auth?: { user: string; password: string }): string[] {
  const args = ['-i', '127.0.0.1', '-p', String(port)];
  if (auth !== undefined) args.push('-u', auth.user, '-P', auth.password);
  return args;
}
