/**
 * Tests for src/config.ts: every variable's default, every validation error
 * (one line, naming the variable), trimming, URL normalisation, DATA_DIR
 * resolution against the working directory and CHECKER_IPS parsing.
 */
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { ConfigError, listenScope, parseConfig, reachableHost, TUNING, type Config } from '../../src/config';
import { SETTING_NAMES, SETTINGS } from '../../src/settings-catalogue';

const CWD = '/srv/app';

/** The error parseConfig throws for this environment (fails the test if none). */
function errorOf(env: Record<string, string>): ConfigError {
  let caught: unknown;
  try {
    parseConfig(env, CWD);
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(ConfigError);
  const err = caught as ConfigError;
  expect(err.code).toBe('config_invalid');
  expect(err.name).toBe('ConfigError');
  expect(err.message).not.toContain('\n');
  return err;
}

describe('defaults', () => {
  test('an empty environment gives every documented default', () => {
    const expected: Config = {
      http: {
        port: 3000,
        host: '0.0.0.0',
        baseUrl: 'http://127.0.0.1:3000',
        baseUrlSet: false,
        contentUrl: 'http://127.0.0.1:3000',
        adminPort: 0,
        adminHost: '127.0.0.1',
        adminToken: undefined,
        wsRequireAuth: false,
        idleTimeoutS: 30,
      },
      limits: {
        maxProxies: 100_000,
        maxBodyBytes: 16 * 1024 * 1024,
        maxCustomUrls: 10,
        maxLargeBodies: 2,
        maxJobsPerAccount: 4,
        maxProxiesInFlightPerAccount: 200_000,
        rateLimitPerS: 20,
        rateLimitBurst: 40,
        wsMaxPerAccount: 64,
        wsMaxPerAddress: 16,
        poolMinIntervalS: 60,
        maxPoolsPerAccount: 20,
        maxProxiesPerPool: 100_000,
        maxPoolProxiesPerAccount: 200_000,
        poolSourceMaxBytes: 8 * 1024 * 1024,
        poolSourceTimeoutMs: 30_000,
      },
      probes: {
        threads: Math.max(1, navigator.hardwareConcurrency ?? 1),
        slotsPerEndpoint: 768,
        maxInFlight: undefined,
        maxJobSharePercent: 95,
        allowPrivateTargets: false,
        tlsCaFile: undefined,
        socketDriver: 'native',
        poolRounds: true,
        poolFlushS: 10,
        adaptiveLimit: true,
      },
      judge: {
        url: undefined,
        key: undefined,
        tls: true,
        tlsUrl: undefined,
        tlsFingerprint: undefined,
        tlsPort: 3443, // PORT + 443
        tlsThread: 'worker',
        checkerIps: [],
        calibrationIntervalMs: 300_000,
      },
      storage: {
        dataDir: '/srv/app/data',
        databaseUrl: undefined,
        pgliteThread: 'main',
        resultSecret: undefined,
        resultRetentionDays: 7,
        resultMaxBytes: 10 * 1024 ** 3,
        statementTimeoutMs: 30_000,
        bootstrapChecks: 1000,
        bootstrapApiKey: undefined,
        nodeId: undefined,
        nodeLeaseMs: 30_000,
        orphanSweepMs: 15_000,
      },
      process: { logLevel: 'info', shutdownGraceMs: 30_000, shutdownTimeoutMs: 40_000 },
      cluster: {
        natsUrl: undefined,
        role: 'embedded',
        region: undefined,
        agentSlots: undefined,
        agentId: undefined,
        heartbeatMs: 2_000,
        agentTtlMs: 10_000,
        ackWaitMs: 15_000,
        shardDeadlineMs: 120_000,
      },
      gateway: {
        port: undefined,
        host: '127.0.0.1',
        maxConnectionsPerKey: 256,
        maxClients: 4096,
        idleTimeoutS: 120,
        connectTimeoutMs: 5_000,
      },
    };
    expect(parseConfig({}, CWD)).toStrictEqual(expected);
  });

  test('blank and whitespace-only values count as unset', () => {
    const env: Record<string, string> = {};
    for (const name of SETTING_NAMES) env[name] = name.length % 2 === 0 ? '' : '  \t ';
    expect(parseConfig(env, CWD)).toStrictEqual(parseConfig({}, CWD));
  });

  test('the default environment and working directory are process.env and process.cwd()', () => {
    const cfg = parseConfig();
    expect(cfg.storage.dataDir.startsWith('/')).toBe(true);
    if (process.env.DATA_DIR === undefined) expect(cfg.storage.dataDir).toBe(`${process.cwd()}/data`);
  });

  test('unknown variables are ignored and the input is not modified', () => {
    const env = { SOMETHING_ELSE: 'x', PORT: ' 8080 ' };
    const copy = { ...env };
    expect(parseConfig(env, CWD).http.port).toBe(8080);
    expect(env).toEqual(copy);
  });
});

/** The value at a dotted path of the Config ("http.port"). */
function at(cfg: Config, path: string): unknown {
  const [group, key] = path.split('.') as [keyof Config, string];
  return (cfg[group] as unknown as Record<string, unknown>)[key];
}

describe('integer variables', () => {
  const ints: [string, string, number, number][] = [
    ['PORT', 'http.port', 0, 65535],
    ['ADMIN_PORT', 'http.adminPort', 0, 65535],
    ['SLOTS_PER_ENDPOINT', 'probes.slotsPerEndpoint', 1, 100_000],
    ['BOOTSTRAP_CHECKS', 'storage.bootstrapChecks', 0, 1_000_000_000],
    ['RESULT_RETENTION_DAYS', 'storage.resultRetentionDays', 1, 3650],
    ['RESULT_MAX_BYTES', 'storage.resultMaxBytes', 0, 2 ** 50],
    ['MAX_PROXIES', 'limits.maxProxies', 1, 10_000_000],
    ['MAX_BODY_BYTES', 'limits.maxBodyBytes', 1024, 1024 * 1024 * 1024],
    ['MAX_CUSTOM_URLS', 'limits.maxCustomUrls', 0, 1000],
    ['PROBE_THREADS', 'probes.threads', 1, 256],
    ['SHUTDOWN_GRACE_MS', 'process.shutdownGraceMs', 0, 3_600_000],
    ['MAX_IN_FLIGHT', 'probes.maxInFlight', 1, 10_000_000],
    ['MAX_JOBS_PER_ACCOUNT', 'limits.maxJobsPerAccount', 1, 10_000],
    ['RATE_LIMIT_PER_S', 'limits.rateLimitPerS', 1, 1_000_000],
    ['WS_MAX_PER_ACCOUNT', 'limits.wsMaxPerAccount', 1, 1_000_000],
    ['POOL_MIN_INTERVAL_S', 'limits.poolMinIntervalS', 1, 86_400],
    ['POOL_FLUSH_S', 'probes.poolFlushS', 1, 3600],
    ['MAX_POOLS_PER_ACCOUNT', 'limits.maxPoolsPerAccount', 1, 100_000],
    ['MAX_PROXIES_PER_POOL', 'limits.maxProxiesPerPool', 1, 10_000_000],
    ['NODE_LEASE_MS', 'storage.nodeLeaseMs', 300, 3_600_000],
    ['JUDGE_TLS_PORT', 'judge.tlsPort', 0, 65535],
    ['MAX_JOB_SHARE_PERCENT', 'probes.maxJobSharePercent', 1, 100],
    ['GATEWAY_PORT', 'gateway.port', 0, 65535],
    ['GATEWAY_MAX_CONNECTIONS', 'gateway.maxConnectionsPerKey', 1, 1_000_000],
    ['GATEWAY_MAX_CLIENTS', 'gateway.maxClients', 1, 1_000_000],
    ['GATEWAY_IDLE_TIMEOUT_S', 'gateway.idleTimeoutS', 1, 86_400],
    ['GATEWAY_CONNECT_TIMEOUT_MS', 'gateway.connectTimeoutMs', 100, 120_000],
  ];

  for (const [name, key, min, max] of ints) {
    test(`${name}: bounds accepted, trimmed`, () => {
      expect(at(parseConfig({ [name]: String(min) }, CWD), key)).toBe(min);
      expect(at(parseConfig({ [name]: String(max) }, CWD), key)).toBe(max);
      expect(at(parseConfig({ [name]: ` ${max} \n` }, CWD), key)).toBe(max);
      expect(at(parseConfig({ [name]: `000${min}` }, CWD), key)).toBe(min);
    });

    test(`${name}: out of range and non-integers are refused with a one-line message`, () => {
      expect(errorOf({ [name]: String(max + 1) }).message).toBe(
        `${name} must be an integer from ${min} to ${max}, got ${max + 1}`,
      );
      if (min > 0) {
        expect(errorOf({ [name]: String(min - 1) }).message).toBe(
          `${name} must be an integer from ${min} to ${max}, got ${min - 1}`,
        );
      }
      for (const bad of ['-1', '1.5', '1e3', 'abc', '0x10', '12 34', '+5', 'Infinity']) {
        expect(errorOf({ [name]: bad }).message).toBe(`${name} must be an integer from ${min} to ${max}, got "${bad}"`);
      }
      expect(errorOf({ [name]: '9'.repeat(400) }).message).toStartWith(`${name} must be an integer from ${min} to ${max}, got `);
    });

    test(`${name}: every integer in range parses to itself`, () => {
      fc.assert(
        fc.property(fc.integer({ min, max }), (n) => at(parseConfig({ [name]: String(n) }, CWD), key) === n),
        { numRuns: 50 },
      );
    });
  }
});

describe('boolean variables', () => {
  const bools: [string, string][] = [
    ['ALLOW_PRIVATE_TARGETS', 'probes.allowPrivateTargets'],
    ['WS_REQUIRE_AUTH', 'http.wsRequireAuth'],
    ['JUDGE_TLS', 'judge.tls'],
  ];
  for (const [name, key] of bools) {
    test(`${name}: true/false spellings, any case`, () => {
      for (const v of ['1', 'true', 'yes', 'on', 'TRUE', 'Yes', ' On ']) expect(at(parseConfig({ [name]: v }, CWD), key)).toBe(true);
      for (const v of ['0', 'false', 'no', 'off', 'FALSE', 'No', ' OFF ']) expect(at(parseConfig({ [name]: v }, CWD), key)).toBe(false);
    });
    test(`${name}: anything else is refused`, () => {
      for (const v of ['maybe', '2', 'y', 'enabled']) {
        expect(errorOf({ [name]: v }).message).toBe(`${name} must be true or false, got "${v}"`);
      }
    });
  }
});

describe('URLs', () => {
  for (const name of ['BASE_URL', 'CONTENT_URL', 'JUDGE_URL'] as const) {
    const key = ({ BASE_URL: 'http.baseUrl', CONTENT_URL: 'http.contentUrl', JUDGE_URL: 'judge.url' } as const)[name];
    test(`${name}: http and https accepted, trailing slashes and whitespace trimmed`, () => {
      expect(at(parseConfig({ [name]: 'https://api.example.com' }, CWD), key)).toBe('https://api.example.com');
      expect(at(parseConfig({ [name]: 'https://api.example.com/' }, CWD), key)).toBe('https://api.example.com');
      expect(at(parseConfig({ [name]: '  http://api.example.com:8080/v1///  ' }, CWD), key)).toBe('http://api.example.com:8080/v1');
      expect(at(parseConfig({ [name]: 'http://127.0.0.1:9/judge' }, CWD), key)).toBe('http://127.0.0.1:9/judge');
    });
    test(`${name}: not absolute or wrong scheme is refused`, () => {
      expect(errorOf({ [name]: 'api.example.com' }).message).toBe(`${name} must be an absolute URL, got "api.example.com"`);
      expect(errorOf({ [name]: '/relative/path' }).message).toBe(`${name} must be an absolute URL, got "/relative/path"`);
      expect(errorOf({ [name]: 'ftp://example.com' }).message).toBe(`${name} must use http: or https:, got "ftp:"`);
      expect(errorOf({ [name]: 'postgres://h/db' }).message).toBe(`${name} must use http: or https:, got "postgres:"`);
    });
  }

  test('DATABASE_URL: postgres and postgresql accepted, others refused', () => {
    expect(parseConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/app' }, CWD).storage.databaseUrl).toBe(
      'postgres://postgres@127.0.0.1:5432/app',
    );
    expect(parseConfig({ DATABASE_URL: ' postgresql://u:p@db/app ' }, CWD).storage.databaseUrl).toBe('postgresql://u:p@db/app');
    expect(errorOf({ DATABASE_URL: 'mysql://db/app' }).message).toBe('DATABASE_URL must use postgres: or postgresql:, got "mysql:"');
    expect(errorOf({ DATABASE_URL: 'not a url' }).message).toBe('DATABASE_URL must be an absolute URL, got "not a url"');
  });

  test('BASE_URL defaults from HOST and PORT; wildcard hosts are shown as 127.0.0.1, IPv6 in brackets', () => {
    expect(parseConfig({ PORT: '8080' }, CWD).http.baseUrl).toBe('http://127.0.0.1:8080');
    expect(parseConfig({ HOST: '::', PORT: '81' }, CWD).http.baseUrl).toBe('http://127.0.0.1:81');
    expect(parseConfig({ HOST: '10.1.2.3' }, CWD).http.baseUrl).toBe('http://10.1.2.3:3000');
    expect(parseConfig({ HOST: ' localhost ' }, CWD).http).toMatchObject({ host: 'localhost', baseUrl: 'http://localhost:3000', baseUrlSet: false });
    expect(parseConfig({ HOST: '::1', PORT: '4000' }, CWD).http).toMatchObject({ host: '::1', baseUrl: 'http://[::1]:4000' });
    expect(parseConfig({ BASE_URL: 'https://api.example.com' }, CWD).http.baseUrlSet).toBe(true);
  });

  test('ADMIN_HOST: loopback unless set, trimmed, independent of HOST; reachableHost gives the URL host of a listener', () => {
    expect(parseConfig({ HOST: '0.0.0.0' }, CWD).http.adminHost).toBe('127.0.0.1');
    expect(parseConfig({ ADMIN_HOST: ' 10.0.0.5 ' }, CWD).http).toMatchObject({ adminHost: '10.0.0.5', host: '0.0.0.0' });
    expect(parseConfig({ ADMIN_HOST: '::1', ADMIN_PORT: '3001' }, CWD).http).toMatchObject({ adminHost: '::1', adminPort: 3001, port: 3000 });
    expect(['0.0.0.0', '::', '::1', '10.0.0.5', 'localhost'].map(reachableHost)).toEqual(['127.0.0.1', '127.0.0.1', '[::1]', '10.0.0.5', 'localhost']);
  });

  test('CONTENT_URL defaults to BASE_URL (explicit or derived)', () => {
    expect(parseConfig({ BASE_URL: 'https://api.example.com/' }, CWD).http.contentUrl).toBe('https://api.example.com');
    expect(parseConfig({ PORT: '5000' }, CWD).http.contentUrl).toBe('http://127.0.0.1:5000');
    const cfg = parseConfig({ BASE_URL: 'https://api.example.com', CONTENT_URL: 'https://cdn.example.com/' }, CWD);
    expect(cfg.http).toMatchObject({ baseUrl: 'https://api.example.com', contentUrl: 'https://cdn.example.com' });
  });
});

describe('DATA_DIR', () => {
  test('absolute paths are kept, relative ones resolve against the working directory', () => {
    expect(parseConfig({ DATA_DIR: '/var/lib/proxycheck' }, CWD).storage.dataDir).toBe('/var/lib/proxycheck');
    expect(parseConfig({ DATA_DIR: 'state' }, CWD).storage.dataDir).toBe('/srv/app/state');
    expect(parseConfig({ DATA_DIR: './a/b/' }, CWD).storage.dataDir).toBe('/srv/app/a/b');
    expect(parseConfig({ DATA_DIR: '../shared/data' }, CWD).storage.dataDir).toBe('/srv/shared/data');
    expect(parseConfig({ DATA_DIR: ' data2 ' }, '/other').storage.dataDir).toBe('/other/data2');
    expect(parseConfig({}, '/other').storage.dataDir).toBe('/other/data');
  });
});

describe('secrets and keys', () => {
  for (const name of ['RESULT_SECRET', 'ADMIN_TOKEN', 'JUDGE_KEY'] as const) {
    const key = name === 'RESULT_SECRET' ? 'storage.resultSecret' : name === 'ADMIN_TOKEN' ? 'http.adminToken' : 'judge.key';
    test(`${name}: at least 16 characters after trimming`, () => {
      expect(at(parseConfig({ [name]: 'x'.repeat(16) }, CWD), key)).toBe('x'.repeat(16));
      expect(at(parseConfig({ [name]: `  ${'y'.repeat(40)}  ` }, CWD), key)).toBe('y'.repeat(40));
      expect(errorOf({ [name]: 'x'.repeat(15) }).message).toBe(`${name} must be at least 16 characters`);
      expect(errorOf({ [name]: `  ${'x'.repeat(15)}  ` }).message).toBe(`${name} must be at least 16 characters`);
    });
  }

  test('BOOTSTRAP_API_KEY: 16..200 printable characters without spaces', () => {
    const msg = 'BOOTSTRAP_API_KEY must be 16 to 200 printable characters without spaces';
    expect(parseConfig({ BOOTSTRAP_API_KEY: 'k'.repeat(16) }, CWD).storage.bootstrapApiKey).toBe('k'.repeat(16));
    expect(parseConfig({ BOOTSTRAP_API_KEY: 'k'.repeat(200) }, CWD).storage.bootstrapApiKey).toBe('k'.repeat(200));
    expect(parseConfig({ BOOTSTRAP_API_KEY: ' pk_live_!#$%&()*+,-./:;<=>?@[]^_`{|}~ ' }, CWD).storage.bootstrapApiKey).toBe(
      'pk_live_!#$%&()*+,-./:;<=>?@[]^_`{|}~',
    );
    for (const bad of ['k'.repeat(15), 'k'.repeat(201), 'abcdefgh ijklmnop', 'abcdefgh\tijklmnop', 'ключключключключ', 'abcdefghijklmnop\u0000']) {
      expect(errorOf({ BOOTSTRAP_API_KEY: bad }).message).toBe(msg);
    }
  });

  test('the error message never echoes a secret value', () => {
    expect(errorOf({ RESULT_SECRET: 'short-secret' }).message).not.toContain('short-secret');
    expect(errorOf({ ADMIN_TOKEN: 'short-token' }).message).not.toContain('short-token');
    expect(errorOf({ JUDGE_KEY: 'short-key' }).message).not.toContain('short-key');
    expect(errorOf({ BOOTSTRAP_API_KEY: 'short key value' }).message).not.toContain('short key value');
  });
});

describe('NODE_ID', () => {
  test('letters, digits and . _ : - up to 64 characters, trimmed', () => {
    for (const ok of ['a', 'api-1', 'eu-west.node_2:blue', 'N'.repeat(64)]) expect(parseConfig({ NODE_ID: ` ${ok} ` }, CWD).storage.nodeId).toBe(ok);
  });

  test('anything else is refused with a one-line message', () => {
    for (const bad of ['-a', '.a', 'a b', 'a/b', 'é', 'N'.repeat(65), "a'b"]) {
      expect(errorOf({ NODE_ID: bad }).message).toBe('NODE_ID must be 1 to 64 characters: letters, digits, and . _ : - (not first)');
    }
  });
});

describe('the TLS judge', () => {
  const FP = 'ab'.repeat(32);
  const CANONICAL = Array(32).fill('AB').join(':');

  test('JUDGE_TLS_URL and JUDGE_TLS_FINGERPRINT together; the fingerprint normalised', () => {
    const cfg = parseConfig({ JUDGE_TLS_URL: 'https://judge.example:8443/judge', JUDGE_TLS_FINGERPRINT: FP }, CWD);
    expect(cfg.judge.tlsUrl).toBe('https://judge.example:8443/judge');
    expect(cfg.judge.tlsFingerprint).toBe(CANONICAL);
    expect(cfg.judge.tls).toBe(true); // the default: on
    expect(parseConfig({ JUDGE_TLS_URL: 'https://j.example/', JUDGE_TLS_FINGERPRINT: ` sha256:${CANONICAL.toLowerCase()} ` }, CWD).judge.tlsFingerprint).toBe(CANONICAL);
  });

  test('one without the other is a config error naming both', () => {
    for (const env of [{ JUDGE_TLS_URL: 'https://j.example/' }, { JUDGE_TLS_FINGERPRINT: FP }] as Record<string, string>[]) {
      const err = errorOf(env);
      expect(err.message).toContain('JUDGE_TLS_URL');
      expect(err.message).toContain('JUDGE_TLS_FINGERPRINT');
    }
  });

  test('JUDGE_TLS_PORT unset: PORT + 443, stable from one start to the next (3443 by default); PORT 0: a free port', () => {
    expect(parseConfig({}, CWD).judge.tlsPort).toBe(3443);
    expect(parseConfig({ PORT: '8080' }, CWD).judge.tlsPort).toBe(8523);
    expect(parseConfig({ PORT: '0' }, CWD).judge.tlsPort).toBe(0);
    expect(parseConfig({ PORT: '65092' }, CWD).judge.tlsPort).toBe(65535);
    expect(parseConfig({ PORT: '65093' }, CWD).judge.tlsPort).toBe(64650);
    expect(parseConfig({ PORT: '65093', JUDGE_TLS_PORT: '4443' }, CWD).judge.tlsPort).toBe(4443);
  });

  test('listenScope: who reaches a listener bound to HOST, for the ready line', () => {
    expect(listenScope('0.0.0.0')).toBe('all interfaces');
    expect(listenScope('::')).toBe('all interfaces');
    expect(listenScope('127.0.0.1')).toBe('this machine only');
    expect(listenScope('[::1]')).toBe('this machine only');
    expect(listenScope('localhost')).toBe('this machine only');
    expect(listenScope('192.0.2.7')).toBe('192.0.2.7 only');
  });

  test('JUDGE_TLS_URL must be https; the fingerprint must be 32 bytes of hex', () => {
    expect(errorOf({ JUDGE_TLS_URL: 'http://j.example/', JUDGE_TLS_FINGERPRINT: FP }).message).toContain('JUDGE_TLS_URL must use https:');
    for (const bad of ['ab'.repeat(31), 'zz'.repeat(32), `${FP}00`, 'AB:CD']) {
      expect(errorOf({ JUDGE_TLS_URL: 'https://j.example/', JUDGE_TLS_FINGERPRINT: bad }).message).toContain('JUDGE_TLS_FINGERPRINT must be a SHA-256 fingerprint');
    }
  });

  test('JUDGE_TLS_PORT 0..65535 (0: a free port); the https check on by default, JUDGE_TLS=false turns the default off', () => {
    expect(parseConfig({ JUDGE_TLS_PORT: '8443' }, CWD).judge.tlsPort).toBe(8443);
    expect(parseConfig({ JUDGE_TLS_PORT: '0', PORT: '3000' }, CWD).judge.tlsPort).toBe(0);
    expect(errorOf({ JUDGE_TLS_PORT: '70000' }).message).toContain('JUDGE_TLS_PORT');
    expect(parseConfig({}, CWD).judge.tls).toBe(true);
    expect(parseConfig({ JUDGE_TLS: 'false' }, CWD).judge.tls).toBe(false);
    expect(parseConfig({ JUDGE_TLS: 'false', JUDGE_TLS_URL: 'https://j.example/', JUDGE_TLS_FINGERPRINT: FP }, CWD).judge.tls).toBe(false);
  });
});

describe('TLS_CA_FILE', () => {
  test('kept as given (trimmed); the file is not read here', () => {
    expect(parseConfig({ TLS_CA_FILE: ' /etc/ssl/extra-ca.pem ' }, CWD).probes.tlsCaFile).toBe('/etc/ssl/extra-ca.pem');
    expect(parseConfig({ TLS_CA_FILE: '/does/not/exist.pem' }, CWD).probes.tlsCaFile).toBe('/does/not/exist.pem');
  });
});

describe('LOG_LEVEL', () => {
  test('each level in any case', () => {
    for (const l of ['debug', 'info', 'warn', 'error', 'silent'] as const) {
      expect(parseConfig({ LOG_LEVEL: l }, CWD).process.logLevel).toBe(l);
      expect(parseConfig({ LOG_LEVEL: ` ${l.toUpperCase()} ` }, CWD).process.logLevel).toBe(l);
    }
  });
  test('anything else is refused', () => {
    expect(errorOf({ LOG_LEVEL: 'verbose' }).message).toBe('LOG_LEVEL must be one of debug, info, warn, error, silent, got "verbose"');
    expect(errorOf({ LOG_LEVEL: 'TRACE' }).message).toStartWith('LOG_LEVEL must be one of debug, info, warn, error, silent, got ');
  });
});

describe('PROBE_SOCKET_DRIVER', () => {
  test('native (default) or node, any case, handed to the probe workers; anything else is refused naming it', () => {
    expect(parseConfig({}, CWD).probes.socketDriver).toBe('native');
    expect(parseConfig({ PROBE_SOCKET_DRIVER: 'node' }, CWD).probes.socketDriver).toBe('node');
    expect(parseConfig({ PROBE_SOCKET_DRIVER: ' Native ' }, CWD).probes.socketDriver).toBe('native');
    expect(errorOf({ PROBE_SOCKET_DRIVER: 'bun' }).message).toStartWith('PROBE_SOCKET_DRIVER must be one of native, node');
  });
});

describe('JUDGE_TLS_THREAD', () => {
  test('worker (default) or main; anything else is refused naming it', () => {
    expect(parseConfig({}, CWD).judge.tlsThread).toBe('worker');
    expect(parseConfig({ JUDGE_TLS_THREAD: 'main' }, CWD).judge.tlsThread).toBe('main');
    expect(errorOf({ JUDGE_TLS_THREAD: 'thread' }).message).toStartWith('JUDGE_TLS_THREAD must be one of worker, main');
  });
});

describe('CHECKER_IPS', () => {
  test('comma-separated IPv4 and IPv6, trimmed, lower-cased, empty items skipped', () => {
    expect(parseConfig({ CHECKER_IPS: '203.0.113.7' }, CWD).judge.checkerIps).toEqual(['203.0.113.7']);
    expect(parseConfig({ CHECKER_IPS: ' 203.0.113.7 , 2001:DB8::1,,198.51.100.0, ' }, CWD).judge.checkerIps).toEqual([
      '203.0.113.7',
      '2001:db8::1',
      '198.51.100.0',
    ]);
    expect(parseConfig({ CHECKER_IPS: '::1,::ffff:192.0.2.1,0.0.0.0,255.255.255.255' }, CWD).judge.checkerIps).toEqual([
      '::1',
      '::ffff:192.0.2.1',
      '0.0.0.0',
      '255.255.255.255',
    ]);
    expect(parseConfig({ CHECKER_IPS: ' , ,' }, CWD).judge.checkerIps).toEqual([]);
  });

  test('anything that is not an IP address is refused, naming the bad item', () => {
    for (const bad of ['256.1.1.1', '1.2.3', '1.2.3.4.5', '01.2.3.4', 'example.com', '1.2.3.4/24', '1.2.3.4:80', ':', '1:2', 'gggg::1', ':::::::::', 'fe80::1%eth0', '1.2.3.4 5.6.7.8']) {
      expect(errorOf({ CHECKER_IPS: `203.0.113.7, ${bad}` }).message).toBe(
        `CHECKER_IPS must be a comma-separated list of IP addresses, got "${bad}"`,
      );
    }
  });

  test('every IPv4 address is accepted as written', () => {
    fc.assert(
      fc.property(fc.ipV4(), (ip) => {
        const out = parseConfig({ CHECKER_IPS: ip }, CWD).judge.checkerIps;
        return out.length === 1 && out[0] === ip;
      }),
      { numRuns: 200 },
    );
  });

  test('every IPv6 address is accepted, lower-cased', () => {
    fc.assert(
      fc.property(fc.ipV6(), (ip) => {
        const out = parseConfig({ CHECKER_IPS: ip.toUpperCase() }, CWD).judge.checkerIps;
        return out.length === 1 && out[0] === ip.toLowerCase();
      }),
      { numRuns: 200 },
    );
  });
});

describe('cluster roles (NATS_URL, ROLE, REGION, agent and timing settings)', () => {
  const PG = 'postgres://u@db:5432/pc';
  const NATS = 'nats://127.0.0.1:4222';

  test('no NATS_URL is the embedded process, whatever else is set', () => {
    expect(parseConfig({ REGION: 'us1' }, CWD).cluster.role).toBe('embedded');
    expect(parseConfig({}, CWD).cluster.natsUrl).toBeUndefined();
  });

  test('NATS_URL without ROLE is ROLE=all, which needs DATABASE_URL and REGION', () => {
    const c = parseConfig({ NATS_URL: NATS, DATABASE_URL: PG, REGION: 'de1' }, CWD);
    expect(c.cluster).toMatchObject({ role: 'all', natsUrl: NATS, region: 'de1' });
    expect(errorOf({ NATS_URL: NATS, REGION: 'de1' }).message).toContain('DATABASE_URL');
    expect(errorOf({ NATS_URL: NATS, DATABASE_URL: PG }).message).toContain('REGION');
  });

  test('ROLE=api needs DATABASE_URL (PGlite is one process), not REGION', () => {
    expect(parseConfig({ NATS_URL: NATS, ROLE: 'api', DATABASE_URL: PG }, CWD).cluster).toMatchObject({ role: 'api', region: undefined });
    expect(errorOf({ NATS_URL: NATS, ROLE: 'api' }).message).toBe('ROLE=api with NATS_URL needs DATABASE_URL (PostgreSQL): the embedded database is one process\'s');
  });

  test('ROLE=agent needs no database but a known region (test1 too)', () => {
    const agent = parseConfig({ NATS_URL: NATS, ROLE: 'agent', REGION: 'test1' }, CWD);
    expect(agent.cluster).toMatchObject({ role: 'agent', region: 'test1' });
    expect(agent.storage.databaseUrl).toBeUndefined();
    expect(errorOf({ NATS_URL: NATS, ROLE: 'agent', REGION: 'xx9' }).message).toContain('REGION');
    expect(errorOf({ NATS_URL: NATS, ROLE: 'agent' }).message).toContain('REGION');
  });

  test('ROLE without NATS_URL, an unknown ROLE and a bad NATS_URL are errors', () => {
    expect(errorOf({ ROLE: 'api', DATABASE_URL: PG }).message).toContain('NATS_URL');
    expect(errorOf({ NATS_URL: NATS, ROLE: 'boss' }).message).toContain('ROLE must be one of');
    expect(errorOf({ NATS_URL: 'http://x:1' }).message).toContain('NATS_URL');
    expect(errorOf({ NATS_URL: 'not a url' }).message).toContain('NATS_URL');
  });

  test('JUDGE_KEY is a shared cluster secret: a node whose judge is not its own needs it, in one line naming it', () => {
    const judge = 'http://10.0.0.1:3000/judge';
    const nodes: Record<string, string>[] = [{ ROLE: 'agent', REGION: 'us1' }, { ROLE: 'api', DATABASE_URL: PG }, { ROLE: 'all', REGION: 'us1', DATABASE_URL: PG }];
    for (const node of nodes) {
      const e = errorOf({ NATS_URL: NATS, ...node, JUDGE_URL: judge });
      expect(e.message).toContain('JUDGE_KEY');
      expect(e.message).not.toContain('\n');
      expect(parseConfig({ NATS_URL: NATS, ...node, JUDGE_URL: judge, JUDGE_KEY: 'k'.repeat(20) }, CWD).judge.key).toBe('k'.repeat(20));
      expect(parseConfig({ NATS_URL: NATS, ...node }, CWD).judge.url).toBeUndefined(); // its own judge: a key per start is enough
    }
    // one embedded process may use an external judge that does not sign (the start warns)
    expect(parseConfig({ JUDGE_URL: judge }, CWD).judge.key).toBeUndefined();
  });

  test('several servers, comma-separated', () => {
    expect(parseConfig({ NATS_URL: 'nats://a:1, nats://b:2', ROLE: 'agent', REGION: 'us1' }, CWD).cluster.natsUrl).toBe('nats://a:1,nats://b:2');
  });

  test('ids that name subjects: NODE_ID in a cluster, AGENT_ID', () => {
    const agent = { NATS_URL: NATS, ROLE: 'agent', REGION: 'us1' };
    expect(parseConfig({ ...agent, AGENT_ID: 'a-1_x' }, CWD).cluster.agentId).toBe('a-1_x');
    expect(errorOf({ ...agent, AGENT_ID: 'a.b' }).message).toContain('AGENT_ID');
    expect(errorOf({ ...agent, NODE_ID: 'n.1' }).message).toContain('NODE_ID');
    // embedded: NODE_ID keeps its wider alphabet
    expect(parseConfig({ NODE_ID: 'n.1:x' }, CWD).storage.nodeId).toBe('n.1:x');
  });

  test('timings and slots: one knob, the heartbeat; the TTL (5 beats) and the ack wait (7.5) follow it', () => {
    const agent = { NATS_URL: NATS, ROLE: 'agent', REGION: 'us1' };
    expect(parseConfig({ ...agent, AGENT_SLOTS: '300', AGENT_HEARTBEAT_MS: '500' }, CWD).cluster).toMatchObject({
      agentSlots: 300,
      heartbeatMs: 500,
      agentTtlMs: 2500,
      ackWaitMs: 3750,
      shardDeadlineMs: 120_000,
    });
    expect(errorOf({ ...agent, AGENT_SLOTS: '0' }).message).toContain('AGENT_SLOTS');
    expect(errorOf({ ...agent, AGENT_HEARTBEAT_MS: '100' }).message).toContain('AGENT_HEARTBEAT_MS');
  });

});

describe('derived values and constants: what is a multiple of a sibling is not read', () => {
  test("the rate limit's burst is twice its rate; an account holds twice MAX_PROXIES in flight; a quarter of its sockets per address", () => {
    expect(parseConfig({ RATE_LIMIT_PER_S: '7', MAX_PROXIES: '500', WS_MAX_PER_ACCOUNT: '10' }, CWD).limits).toMatchObject({
      rateLimitPerS: 7,
      rateLimitBurst: 14,
      maxProxies: 500,
      maxProxiesInFlightPerAccount: 1000,
      wsMaxPerAccount: 10,
      wsMaxPerAddress: 2,
    });
    expect(parseConfig({ WS_MAX_PER_ACCOUNT: '1' }, CWD).limits.wsMaxPerAddress).toBe(1);
  });

  test("all of an account's pools hold twice MAX_PROXIES_PER_POOL", () => {
    expect(parseConfig({ MAX_PROXIES_PER_POOL: '300' }, CWD).limits).toMatchObject({ maxProxiesPerPool: 300, maxPoolProxiesPerAccount: 600 });
  });

  test('the orphan sweep runs every half lease; the process exits 10 s after the grace', () => {
    expect(parseConfig({ NODE_LEASE_MS: '4000' }, CWD).storage.orphanSweepMs).toBe(2000);
    expect(parseConfig({ SHUTDOWN_GRACE_MS: '0' }, CWD).process).toEqual({ logLevel: 'info', shutdownGraceMs: 0, shutdownTimeoutMs: 10_000 });
  });

  test('the constants are in the Config (a test starts with smaller ones), never read from the environment', () => {
    const gone = {
      MAX_LARGE_BODIES: '1',
      DB_STATEMENT_TIMEOUT_MS: '100',
      CLUSTER_ACK_WAIT_MS: '1000',
      CLUSTER_SHARD_DEADLINE_MS: '1000',
      CALIBRATION_INTERVAL_MS: '1000',
      HTTP_IDLE_TIMEOUT_S: '1',
      RATE_LIMIT_BURST: '1',
      AGENT_TTL_MS: '1000',
      ORPHAN_SWEEP_MS: '100',
      SHUTDOWN_TIMEOUT_MS: '1000',
      WS_MAX_PER_ADDRESS: '1',
      MAX_PROXIES_IN_FLIGHT_PER_ACCOUNT: '1',
    };
    expect(parseConfig(gone, CWD)).toStrictEqual(parseConfig({}, CWD));
    for (const name of Object.keys(gone)) expect(SETTING_NAMES).not.toContain(name as never);
    const c = parseConfig({}, CWD);
    expect([c.limits.maxLargeBodies, c.storage.statementTimeoutMs, c.judge.calibrationIntervalMs, c.http.idleTimeoutS, c.cluster.shardDeadlineMs]).toEqual([
      TUNING.maxLargeBodies,
      TUNING.dbStatementTimeoutMs,
      TUNING.calibrationIntervalMs,
      TUNING.httpIdleTimeoutS,
      TUNING.clusterShardDeadlineMs,
    ]);
  });
});

describe('the catalogue (src/settings-catalogue.ts) is what the parser reads', () => {
  test('five settings a person sets; every other one is tuning with a default that works', () => {
    const set = SETTING_NAMES.filter((n) => SETTINGS[n].tier === 'set');
    expect(set).toEqual(['PORT', 'HOST', 'BASE_URL', 'DATA_DIR', 'DATABASE_URL']);
    for (const n of SETTING_NAMES) {
      expect(SETTINGS[n].meaning.length, n).toBeGreaterThan(10);
      expect(SETTINGS[n].meaning, n).not.toContain('\n');
      expect(SETTINGS[n].shown.length, n).toBeGreaterThan(0);
    }
  });

  test('every setting the parser owns is read: a value it cannot read is an error naming it', () => {
    const BAD = '\u0001 not a value \u0001';
    // free text: any value is a value
    const text = ['HOST', 'ADMIN_HOST', 'GATEWAY_HOST', 'REGION', 'DATA_DIR', 'TLS_CA_FILE'];
    for (const name of SETTING_NAMES) {
      if (SETTINGS[name].readBy !== undefined || text.includes(name)) continue;
      const cluster: Record<string, string> = ['ROLE', 'REGION', 'AGENT_SLOTS', 'AGENT_ID', 'AGENT_HEARTBEAT_MS'].includes(name) ? { NATS_URL: 'nats://127.0.0.1:4222', ROLE: 'agent', REGION: 'us1' } : {};
      expect(errorOf({ ...cluster, [name]: BAD }).message, name).toContain(name);
    }
    expect(parseConfig({ REGION: 'us1', NATS_URL: 'nats://127.0.0.1:4222', ROLE: 'agent' }, CWD).cluster.region).toBe('us1');
    expect(parseConfig({ HOST: '10.9.8.7', ADMIN_HOST: '10.9.8.6' }, CWD).http).toMatchObject({ host: '10.9.8.7', adminHost: '10.9.8.6' });
    expect(parseConfig({ GATEWAY_HOST: '10.9.8.5' }, CWD).gateway.host).toBe('10.9.8.5');
  });
});
