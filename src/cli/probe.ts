/**
 * `bun src/cli/probe.ts LIST --type socks5 --timeout 3000 --concurrency 500
 *  [--judge URL] [--allow-private] [--threads N] [--checker-ip IP]...`
 *
 * The probe engine without the API: reads a proxy list (a file, or `-` for
 * stdin; the service's own parser), calibrates against the judge (a local one
 * on 127.0.0.1 when --judge is not given: only proxies on this machine can
 * reach it; it signs its answers with a key of this run, so tampering proxies
 * are `tampered`; an external --judge is verified with JUDGE_KEY from the
 * environment when set), runs every proxy through the probe workers with at most
 * --concurrency probes in flight, and prints one JSON line per result on
 * stdout as it arrives, then one summary line. Diagnostics go to stderr.
 * Exit codes: 0 done (whatever the verdicts), 2 usage / input error, 1 the
 * engine could not start. Ctrl-C cancels cooperatively and still prints the summary.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { errorText } from '../errors';
import { openGeo, type Geo } from '../geo/geo';
import { calibrate, parseJudgeUrl } from '../judge/calibrate';
import { startJudgeServer, type JudgeServer } from '../judge/server';
import { ProbeWorkers } from '../probe/workers/probe-workers';
import { probeSettings } from '../probe/settings';
import type { ProbeResult, ProbeTask } from '../probe/types';
import { parseProxyList } from '../proxy/parse';
import { PROXY_TYPES, type ProxyAddress, type ProxyType } from '../proxy/types';
import { usageError } from './exit-codes';

const USAGE =
  'usage: bun src/cli/probe.ts <list.txt | -> [--type http|socks4|socks5] [--timeout ms] [--concurrency n]\n' +
  '                            [--judge URL] [--allow-private] [--threads n] [--checker-ip IP]...';

interface CliOptions {
  source: string;
  type: ProxyType;
  timeoutMs: number;
  concurrency: number;
  judge: string | null;
  allowPrivate: boolean;
  threads: number | undefined;
  checkerIps: string[];
}

function intOption(name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw usageError(`--${name} must be an integer ${min}..${max}`);
  return n;
}

export function parseCliArgs(argv: string[]): CliOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        type: { type: 'string' },
        timeout: { type: 'string' },
        concurrency: { type: 'string' },
        judge: { type: 'string' },
        'allow-private': { type: 'boolean' },
        threads: { type: 'string' },
        'checker-ip': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    throw usageError(errorText(e));
  }
  const { values, positionals } = parsed;
  if (values.help) throw usageError('');
  if (positionals.length !== 1) throw usageError('exactly one list file (or -) is required');
  const type = (values.type ?? 'http') as ProxyType;
  if (!PROXY_TYPES.includes(type)) throw usageError(`--type must be one of ${PROXY_TYPES.join(', ')}`);
  return {
    source: positionals[0]!,
    type,
    timeoutMs: intOption('timeout', values.timeout, type === 'http' ? 5000 : 3000, 100, 60_000),
    concurrency: intOption('concurrency', values.concurrency, 500, 1, 100_000),
    judge: values.judge ?? null,
    allowPrivate: values['allow-private'] ?? false,
    threads: values.threads === undefined ? undefined : intOption('threads', values.threads, 1, 1, 256),
    checkerIps: values['checker-ip'] ?? [],
  };
}

function hostPort(p: ProxyAddress): string {
  return p.host.includes(':') ? `[${p.host}]:${p.port}` : `${p.host}:${p.port}`;
}

function line(proxy: ProxyAddress, r: ProbeResult, geo: Geo): string {
  const g = r.origin ? geo.lookup(r.origin) : null;
  return JSON.stringify({
    proxy: hostPort(proxy),
    status: r.status,
    statusCode: r.statusCode,
    responseTime: `${r.responseTimeMs.toFixed(2)} ms`,
    anonymity: r.anonymity,
    origin: r.origin,
    country: g?.country ?? null,
    country_name: g?.country_name ?? null,
    location: g?.location ?? null,
    isp: g?.isp ?? null,
    asn: g?.asn ?? null,
    coordinates: g?.coordinates ?? null,
    error: r.error,
  });
}

async function main(argv: string[]): Promise<number> {
  let opts: CliOptions;
  try {
    opts = parseCliArgs(argv);
  } catch (e) {
    const text = errorText(e);
    process.stderr.write(`${text ? `${text}\n` : ''}${USAGE}\n`);
    return 2;
  }
  let text: string;
  try {
    text = opts.source === '-' ? await Bun.stdin.text() : readFileSync(opts.source, 'utf8');
  } catch (e) {
    process.stderr.write(`cannot read ${opts.source}: ${errorText(e)}\n`);
    return 2;
  }
  const list = parseProxyList(text);
  const started = performance.now();

  let judgeServer: JudgeServer | null = null;
  let workers: ProbeWorkers | null = null;
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  try {
    const [geo, p] = await Promise.all([openGeo(), ProbeWorkers.start({ threads: opts.threads })]);
    workers = p;
    // the local judge signs with a key of this run; an external one is verified with JUDGE_KEY when set
    const judgeKey = opts.judge === null ? randomBytes(32).toString('base64url') : process.env.JUDGE_KEY || undefined;
    if (opts.judge === null) {
      judgeServer = await startJudgeServer({ host: '127.0.0.1', port: 0, key: judgeKey });
      process.stderr.write(`local judge at ${judgeServer.url} (only proxies on this machine can reach it; use --judge for public proxies)\n`);
    }
    const judge = parseJudgeUrl(opts.judge ?? judgeServer!.url);
    const cal = await calibrate(judge, Math.min(opts.timeoutMs, 5000), undefined, judgeKey);
    const settings = probeSettings({
      type: opts.type,
      timeoutMs: opts.timeoutMs,
      judge,
      calibrated: cal,
      extraCheckerIps: opts.checkerIps,
      allowPrivateTargets: opts.allowPrivate,
      judgeKey,
    });
    const engineReadyMs = performance.now() - started;

    const proxies = list.proxies;
    const shardSize = Math.max(1, Math.min(100, Math.ceil(opts.concurrency / workers.threads)));
    const counts = { working: 0, failed: 0 };
    const errors: Record<string, number> = {};
    const anonymity: Record<string, number> = {};
    let out: string[] = [];
    const onBatch = (batch: ProbeResult[]) => {
      for (const r of batch) {
        counts[r.status]++;
        if (r.error) errors[r.error.code] = (errors[r.error.code] ?? 0) + 1;
        if (r.anonymity) anonymity[r.anonymity] = (anonymity[r.anonymity] ?? 0) + 1;
        out.push(line(proxies[r.index]!, r, geo));
      }
      process.stdout.write(`${out.join('\n')}\n`);
      out = [];
    };

    // Keep at most `concurrency` probes in flight: a shard is submitted when its probes fit.
    let next = 0;
    let inFlight = 0;
    const running = new Set<Promise<unknown>>();
    while (next < proxies.length && !ac.signal.aborted) {
      const size = Math.min(shardSize, proxies.length - next);
      if (inFlight + size > opts.concurrency && running.size > 0) {
        await Promise.race(running);
        continue;
      }
      const tasks: ProbeTask[] = [];
      for (let i = next; i < next + size; i++) tasks.push({ index: i, proxy: proxies[i]! });
      next += size;
      inFlight += size;
      const run: Promise<unknown> = workers.runShard({ kind: 'probe', tasks, settings }, onBatch, ac.signal).finally(() => {
        inFlight -= size;
        running.delete(run);
      });
      run.catch(() => undefined); // handled below by race/all; this keeps it from counting as unhandled meanwhile
      running.add(run);
    }
    await Promise.all(running);
    const elapsed = performance.now() - started;
    process.stdout.write(
      `${JSON.stringify({
        summary: {
          total: proxies.length,
          checked: counts.working + counts.failed,
          working: counts.working,
          failed: counts.failed,
          invalid: list.invalid,
          duplicates: list.duplicates,
          cancelled: ac.signal.aborted,
          anonymity,
          errors,
          type: opts.type,
          timeout_ms: opts.timeoutMs,
          concurrency: opts.concurrency,
          threads: workers.threads,
          judge: judge.url,
          engine_ready_ms: Math.round(engineReadyMs),
          elapsed_ms: Math.round(elapsed),
        },
      })}\n`,
    );
    return 0;
  } catch (e) {
    const code = (e as { code?: unknown })?.code;
    process.stderr.write(`probe engine failed${typeof code === 'string' ? ` (${code})` : ''}: ${errorText(e)}\n`);
    return 1;
  } finally {
    process.removeListener('SIGINT', onSigint);
    await workers?.close();
    await judgeServer?.close();
  }
}

if (import.meta.main) {
  process.exitCode = await main(process.argv.slice(2));
}
