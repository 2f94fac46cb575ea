/**
 * Tests for .dependency-cruiser.cjs, the dependency rule (docs/DESIGN.md
 * "Layers"): run the dependency-cruiser CLI with the repo's config on small
 * temporary trees that break one rule each (a cycle, jobs importing http, probe
 * importing db), on a clean layered tree, and on the repository itself.
 * Several imports are `import type`: they must count like any other.
 */
import { afterAll, describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const REPO = join(import.meta.dir, '..', '..');
const CONFIG = join(REPO, '.dependency-cruiser.cjs');
const DEPCRUISE = join(REPO, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}
interface CruiseResult {
  modules: { source: string }[];
  summary: { violations: Violation[]; totalCruised: number; totalDependenciesCruised: number };
}

/** Runs `depcruise --config <repo config> -T json src workers db` in `cwd` (only the folders that exist). */
async function cruise(cwd: string, folders: string[]): Promise<CruiseResult> {
  // under Node, as `npm run lint:deps` runs it (dependency-cruiser 17 finds @swc/core's Visitor only there)
  const proc = Bun.spawn(['node', DEPCRUISE, '--config', CONFIG, '--output-type', 'json', ...folders], {
    cwd,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  if (!out.trim().startsWith('{')) throw new Error(`depcruise printed no JSON (exit ${proc.exitCode}): ${err}`);
  return JSON.parse(out) as CruiseResult;
}

const lines = (r: CruiseResult) => r.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A temporary tree with a tsconfig.json and these files (path -> text). */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'dependency-rule-'));
  made.push(dir);
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'ESNext', moduleResolution: 'bundler', strict: true } }),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe('the dependency rule on small trees', () => {
  test('a clean layered tree passes, and every file and import is seen', async () => {
    const dir = tree({
      'src/http/routes.ts': "import { run } from '../jobs/service';\nexport const route = () => run();\n",
      'src/jobs/service.ts':
        "import { charge } from '../accounts/quota';\nimport type { Check } from '../probe/types';\nexport const run = (c?: Check) => charge(c);\n",
      'src/accounts/quota.ts':
        "import type { Row } from '../../db/schema';\nimport { parse } from '../proxy/parse';\nexport const charge = (x: unknown): Row | null => (parse(String(x)) ? null : null);\n",
      'src/probe/types.ts': 'export interface Check { host: string }\n',
      'src/probe/probe.ts': "import { parse } from '../proxy/parse';\nexport const probe = (s: string) => parse(s);\n",
      'src/proxy/parse.ts': 'export const parse = (s: string) => s.length > 0;\n',
      'db/schema.ts': 'export interface Row { id: number }\n',
    });
    const r = await cruise(dir, ['src', 'db']);
    expect(lines(r)).toEqual([]);
    expect(r.summary.totalCruised).toBe(7);
    expect(r.summary.totalDependenciesCruised).toBe(6);
  }, 30_000);

  test('a cycle (one side type-only) is no-circular', async () => {
    const dir = tree({
      'src/results/record.ts': "import { format } from './summary';\nexport interface Rec { ms: number }\nexport const rec = (ms: number) => format(ms);\n",
      'src/results/summary.ts': "import type { Rec } from './record';\nexport const format = (ms: number) => `${ms}`;\nexport const sum = (r: Rec) => r.ms;\n",
    });
    const r = await cruise(dir, ['src']);
    // dependency-cruiser names a cycle once, at its first import; without the
    // type-only import back there would be no cycle at all
    expect(lines(r)).toEqual(['no-circular: src/results/record.ts → src/results/summary.ts']);
  }, 30_000);

  test('jobs importing http (type-only too) is upward-from-jobs', async () => {
    const dir = tree({
      'src/http/check-request.ts': 'export interface CheckRequest { proxies: string[] }\nexport const apiError = () => new Error();\n',
      'src/jobs/actor.ts':
        "import type { CheckRequest } from '../http/check-request';\nexport const start = (r: CheckRequest) => r.proxies.length;\n",
      'src/jobs/service.ts': "import { apiError } from '../http/check-request';\nexport const fail = () => apiError();\n",
    });
    const r = await cruise(dir, ['src']);
    expect(lines(r)).toEqual([
      'upward-from-jobs: src/jobs/actor.ts → src/http/check-request.ts',
      'upward-from-jobs: src/jobs/service.ts → src/http/check-request.ts',
    ]);
  }, 30_000);

  test('probe importing db is probe-and-workers-isolated, a worker importing db too', async () => {
    const dir = tree({
      'db/schema.ts': 'export interface Row { id: number }\nexport const table = "scans";\n',
      'src/probe/probe.ts': "import type { Row } from '../../db/schema';\nexport const probe = (r: Row) => r.id;\n",
      'workers/probe-worker.ts': "import { table } from '../db/schema';\nexport const name = table;\n",
    });
    const r = await cruise(dir, ['src', 'workers', 'db']);
    expect(lines(r)).toEqual([
      'probe-and-workers-isolated: src/probe/probe.ts → db/schema.ts',
      'probe-and-workers-isolated: workers/probe-worker.ts → db/schema.ts',
    ]);
  }, 30_000);

  test('browser code importing server code, and a module in no layer, are named', async () => {
    const dir = tree({
      'src/web/client/view.ts': "import { LIMIT } from '../../limits';\nexport const n = LIMIT;\n",
      'src/limits.ts': 'export const LIMIT = 1;\n',
      'src/newthing/x.ts': "import { LIMIT } from '../limits';\nexport const m = LIMIT;\n",
    });
    const r = await cruise(dir, ['src']);
    expect(lines(r)).toEqual([
      'unlayered-module: src/newthing/x.ts → src/limits.ts',
      'web-client-browser-only: src/web/client/view.ts → src/limits.ts',
    ]);
  }, 30_000);
});

describe('the browser code and the address parser', () => {
  test('the dashboard may import src/proxy, which may import no node module', async () => {
    const dir = tree({
      'src/web/client/count.ts': "import { parse } from '../../proxy/parse';\nexport const n = parse('x');\n",
      'src/proxy/parse.ts': "import { createHash } from 'node:crypto';\nexport const parse = (s: string) => createHash('sha1').update(s).digest('hex').length;\n",
    });
    const r = await cruise(dir, ['src']);
    expect(lines(r)).toEqual(['browser-shared-no-node: src/proxy/parse.ts → crypto']);
  }, 30_000);
});

describe('the dependency rule on this repository', () => {
  // Fails until the jobs refactor removes src/jobs' imports of src/http
  // (actor.ts, service.ts: CheckRequest, AuthenticatedAccount, ChecksPort/AppDeps, ApiError).
  test('src, workers and db have no violation', async () => {
    const r = await cruise(REPO, ['src', 'workers', 'db']);
    expect(r.modules.some((m) => m.source === 'src/server.ts')).toBe(true); // TypeScript was parsed
    expect(lines(r)).toEqual([]);
  }, 30_000);
});
