/**
 * The probe benches' farm (bench/probe-cpu-farm.ts) as a child process, so
 * that the CPU a bench measures is the checker's alone, and the probe
 * settings that point at it (signed judge answers, the https check's TLS
 * judge on TLS_JUDGE_PORT). Used by bench/probe-cpu.ts and
 * bench/probe-trickle.ts.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { parseJudgeUrl } from '../src/judge/calibrate';
import type { ProtocolSettings } from '../src/probe/types';
import type { ProxyType } from '../src/proxy/types';
import { TEST_CERT } from '../test/fixtures/tls-cert';
import { fingerprintOfDer, pemCertificateDer } from '../src/probe/codec/cert-pin';

/** where the farm plays the judge's TLS listener (bench/probe-cpu-farm.ts) */
export const TLS_JUDGE_PORT = 10;

export interface FarmStats {
  cpuUs: number;
  /** TLS handshakes the farm answered so far, and how many resumed a session (older farms: absent) */
  handshakes?: number;
  resumed?: number;
}

export interface ProbeFarm {
  ports: Record<'http' | 'socks' | 'hole' | 'refused', number[]>;
  /** the key the farm signs its judge answers with (every probe verifies them, as with the service's judge) */
  judgeKey: string;
  stats(): Promise<FarmStats>;
  stop(): void;
}

export async function startProbeFarm(): Promise<ProbeFarm> {
  const judgeKey = randomBytes(32).toString('base64url');
  const farm = spawn(process.execPath, [new URL('./probe-cpu-farm.ts', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, JUDGE_KEY: judgeKey },
  });
  const lines = createInterface({ input: farm.stdout! });
  const waiting: ((l: string) => void)[] = [];
  lines.on('line', (l) => waiting.shift()?.(l));
  const nextLine = () => new Promise<string>((r) => waiting.push(r));
  const { ports } = JSON.parse(await nextLine()) as { ports: ProbeFarm['ports'] };
  return {
    ports,
    judgeKey,
    stats: async () => {
      const p = nextLine();
      farm.stdin!.write('cpu\n');
      return JSON.parse(await p) as FarmStats;
    },
    stop: () => void farm.stdin!.end(),
  };
}

/** Probe settings against the farm: `judge` (an http or https judge URL), with the https check's TLS judge when `httpsCheck`. */
export function farmSettings(farm: ProbeFarm, o: { timeoutMs: number; httpsCheck: boolean; type?: ProxyType; judge?: string }): ProtocolSettings {
  return {
    type: o.type ?? 'http',
    timeoutMs: o.timeoutMs,
    judge: parseJudgeUrl(o.judge ?? 'http://127.0.0.1:9/judge'),
    checkerIps: ['127.0.0.1'],
    baselineHeaders: [],
    allowPrivateTargets: true,
    tlsCa: TEST_CERT,
    judgeKey: farm.judgeKey,
    ...(o.httpsCheck
      ? {
          tlsJudge: {
            ...parseJudgeUrl(`https://127.0.0.1:${TLS_JUDGE_PORT}/judge`),
            protocol: 'https:' as const,
            fingerprint: fingerprintOfDer(pemCertificateDer(TEST_CERT)!),
            key: farm.judgeKey,
          },
        }
      : {}),
  };
}
