/**
 * No function in src/web over MAX_LINES lines (issue 35): each file is parsed
 * with swc (the parser dependency-cruiser already uses) and every function
 * (declarations, expressions, arrows, methods, accessors, constructors) is
 * measured from its first line to its last. A helper below is tested on
 * known sources so the check itself cannot pass by measuring nothing.
 */
import { describe, expect, test } from 'bun:test';
import { parseSync } from '@swc/core';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const MAX_LINES = 80;
const ROOT = join(import.meta.dir, '..', '..');
const FUNCTION_KINDS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ClassMethod', 'PrivateMethod', 'Constructor', 'MethodProperty', 'GetterProperty', 'SetterProperty']);

interface Span {
  start: number;
  end: number;
}

/** Every function of `source` with its name (when it has one) and its length in lines. */
function functionLengths(source: string): { name: string; line: number; lines: number }[] {
  // a trailing empty statement ends exactly at the source's last byte: it gives the parser's offset of this file
  const text = `${source}\n;`;
  const bytes = Buffer.from(text);
  const program = parseSync(text, { syntax: 'typescript', target: 'es2022' });
  const last = program.body[program.body.length - 1] as unknown as { span: Span };
  const base = last.span.end - bytes.length;
  const lineAt = (pos: number): number => {
    let n = 1;
    const end = pos - base;
    for (let i = 0; i < end; i++) if (bytes[i] === 10) n++;
    return n;
  };
  const out: { name: string; line: number; lines: number }[] = [];
  const walk = (node: unknown, name: string): void => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n, name);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const o = node as Record<string, unknown> & { type?: string; span?: Span };
    let here = name;
    const id = (o.identifier ?? o.key ?? o.id) as { value?: string } | undefined;
    if (typeof id?.value === 'string') here = id.value;
    if (typeof o.type === 'string' && FUNCTION_KINDS.has(o.type) && o.span !== undefined) {
      const first = lineAt(o.span.start);
      out.push({ name: here, line: first, lines: lineAt(o.span.end) - first + 1 });
    }
    for (const [k, v] of Object.entries(o)) if (k !== 'span') walk(v, here);
  };
  walk(program.body, '(anonymous)');
  return out;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

describe('functionLengths (the measure)', () => {
  test('a declaration, an arrow and a method are measured first line to last', () => {
    const src = ['// x', 'function a() {', '  return 1;', '}', 'const b = () => {', '  const é = "ü";', '  return é;', '};', 'class C {', '  m() {', '    return 2;', '  }', '}'].join('\n');
    const got = functionLengths(src).map((f) => [f.name, f.line, f.lines]);
    expect(got).toEqual([
      ['a', 2, 3],
      ['b', 5, 4],
      ['m', 10, 3],
    ]);
  });

  test('nested functions count on their own too', () => {
    const src = `export function outer() {\n  const inner = function () {\n    return 1;\n  };\n  return inner;\n}\n`;
    expect(functionLengths(src).map((f) => f.lines)).toEqual([6, 3]);
  });
});

describe(`no function in src/web over ${MAX_LINES} lines`, () => {
  const files = tsFiles(join(ROOT, 'src', 'web'));
  test('src/web has files to check', () => {
    expect(files.length).toBeGreaterThan(10);
  });
  test('every function is short enough', () => {
    const long = files.flatMap((file) =>
      functionLengths(readFileSync(file, 'utf8'))
        .filter((f) => f.lines > MAX_LINES)
        .map((f) => `${relative(ROOT, file)}:${f.line} ${f.name} (${f.lines} lines)`),
    );
    expect(long).toEqual([]);
  });
});
