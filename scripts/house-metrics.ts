/**
 * The house's shape in numbers (issue 20's before/after): the longest
 * functions, the environment variables the code reads, the error-code string
 * literals at `new ServiceError(` sites, the mode branches left in the
 * composition roots, and the largest files.
 *
 *   bun scripts/house-metrics.ts [--json]
 *
 * Functions are measured from their first to their last line (swc's spans),
 * nested functions counted on their own as well.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseSync } from '@swc/core';

const ROOT = join(import.meta.dir, '..');
const SOURCE_DIRS = ['src', 'workers', 'db'];

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name === 'migrations' || name === 'node_modules') continue;
      out.push(...files(p));
    } else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

interface FunctionSpan {
  file: string;
  name: string;
  lines: number;
}

function lineOf(starts: number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

function functionsOf(file: string): FunctionSpan[] {
  const text = readFileSync(file, 'utf8');
  const ast = parseSync(text, { syntax: 'typescript', tsx: file.endsWith('.tsx') });
  const bytes = Buffer.from(text, 'utf8');
  const starts = [0];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) starts.push(i + 1);
  // swc spans are byte offsets from a global counter: rebase on the module's own start
  const base = (ast as { span: { start: number } }).span.start;
  const out: FunctionSpan[] = [];
  const rel = relative(ROOT, file);
  const visit = (node: unknown, name: string): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n, name);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const n = node as Record<string, unknown> & { type?: string; span?: { start: number; end: number } };
    let here = name;
    if (n.type === 'VariableDeclarator' && (n.id as { type?: string; value?: string })?.type === 'Identifier') here = (n.id as { value: string }).value;
    if ((n.type === 'ClassMethod' || n.type === 'PrivateMethod' || n.type === 'KeyValueProperty' || n.type === 'MethodProperty') && n.key !== undefined) {
      const k = n.key as { value?: string; id?: { value?: string } };
      here = String(k.value ?? k.id?.value ?? name);
    }
    if (n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression') {
      const id = (n.identifier as { value?: string } | undefined)?.value;
      if (id !== undefined) here = id;
    }
    const isFn = n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression' || n.type === 'Function' || n.type === 'Constructor';
    if (isFn && n.span !== undefined) {
      const a = lineOf(starts, n.span.start - base);
      const b = lineOf(starts, Math.max(n.span.start, n.span.end - 1) - base);
      out.push({ file: rel, name: here || '(anonymous)', lines: b - a + 1 });
    }
    for (const [k, v] of Object.entries(n)) if (k !== 'span') visit(v, here);
  };
  visit(ast, '');
  return out;
}

const all = SOURCE_DIRS.flatMap((d) => files(join(ROOT, d)));
const fns = all.flatMap(functionsOf).sort((a, b) => b.lines - a.lines);
// a FunctionDeclaration is a Function under the hood in some swc versions: keep one per (file, name, lines)
const seen = new Set<string>();
const unique = fns.filter((f) => {
  const k = `${f.file}:${f.name}:${f.lines}`;
  if (seen.has(k)) return false;
  seen.add(k);
  return true;
});

const envNames = new Set<string>();
for (const f of all) {
  const text = readFileSync(f, 'utf8');
  for (const m of text.matchAll(/\b(?:int|str|bool|url|ipList|num|list|flag|ms|secs|bytes|pct)\(env, '([A-Z][A-Z0-9_]+)'/g)) envNames.add(m[1]!);
  for (const m of text.matchAll(/process\.env\.([A-Z][A-Z0-9_]+)/g)) envNames.add(m[1]!);
  for (const m of text.matchAll(/process\.env\['([A-Z][A-Z0-9_]+)'\]/g)) envNames.add(m[1]!);
  for (const m of text.matchAll(/\benv\[['"]([A-Z][A-Z0-9_]+)['"]\]/g)) envNames.add(m[1]!);
  // the catalogue of settings (src/settings-catalogue.ts): one row per variable, read through readSetting
  if (f.endsWith('settings-catalogue.ts')) for (const m of text.matchAll(/^ {2}([A-Z][A-Z0-9_]+): s\(/gm)) envNames.add(m[1]!);
}

let literalSites = 0;
const literalCodes = new Set<string>();
let errorSites = 0;
for (const f of all) {
  const text = readFileSync(f, 'utf8');
  for (const m of text.matchAll(/new ServiceError\(\s*('([a-z_]+)'|[^,)]+)/g)) {
    errorSites++;
    if (m[2] !== undefined) {
      literalSites++;
      literalCodes.add(m[2]);
    }
  }
}

// mode branches: conditions in the composition roots that ask which mode this process is in
const ROOTS = ['src/server.ts', 'src/agent.ts', ...all.map((f) => relative(ROOT, f)).filter((f) => f.startsWith('src/compose/'))];
const MODE = /\b(cluster|liveAgents|share|natsConn|natsPool|registry|board|queueDepth|natsUrl|role)\b/;
let modeBranches = 0;
for (const r of ROOTS) {
  let text: string;
  try {
    text = readFileSync(join(ROOT, r), 'utf8');
  } catch {
    continue;
  }
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  for (const m of code.matchAll(/(?:\bif\s*\(([^)]*)\)|([^\n;?]{1,120})\?(?![.?])|([^\n;]{1,120})(?:&&|\?\?))/g)) {
    const cond = m[1] ?? m[2] ?? m[3] ?? '';
    if (MODE.test(cond)) modeBranches++;
  }
}

const sizes = all
  .map((f) => ({ file: relative(ROOT, f), lines: readFileSync(f, 'utf8').split('\n').length }))
  .sort((a, b) => b.lines - a.lines);

const report = {
  functions: unique.length,
  over50: unique.filter((f) => f.lines > 50).length,
  over80: unique.filter((f) => f.lines > 80).length,
  longest: unique.slice(0, 10),
  longestInRoots: unique.filter((f) => f.file === 'src/server.ts' || f.file === 'src/agent.ts' || f.file.startsWith('src/compose/')).slice(0, 5),
  envVariables: envNames.size,
  envNames: [...envNames].sort(),
  serviceErrorSites: errorSites,
  errorCodeLiteralSites: literalSites,
  errorCodeLiterals: literalCodes.size,
  modeBranchesInRoots: modeBranches,
  largestFiles: sizes.slice(0, 10),
};

if (process.argv.includes('--json')) {
  console.log(JSON.stringify(report, null, 2));
} else {
  console.log(`functions: ${report.functions}, over 50 lines: ${report.over50}, over 80: ${report.over80}`);
  console.log('longest:');
  for (const f of report.longest) console.log(`  ${String(f.lines).padStart(4)}  ${f.file} ${f.name}`);
  console.log('longest in the composition roots:');
  for (const f of report.longestInRoots) console.log(`  ${String(f.lines).padStart(4)}  ${f.file} ${f.name}`);
  console.log(`environment variables read: ${report.envVariables}`);
  console.log(`new ServiceError( sites: ${report.serviceErrorSites}; with an inline code literal: ${report.errorCodeLiteralSites} (${report.errorCodeLiterals} distinct codes)`);
  console.log(`mode branches in the composition roots: ${report.modeBranchesInRoots}`);
  console.log('largest files:');
  for (const f of report.largestFiles) console.log(`  ${String(f.lines).padStart(4)}  ${f.file}`);
}
