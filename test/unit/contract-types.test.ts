/**
 * src/contract/types.ts is the one contract module the dashboard may import
 * (.dependency-cruiser.cjs): it must stay `export type` only, and every
 * dashboard import of it must be `import type`, so no schema code (nor
 * TypeBox) reaches the browser bundle. Also: the schemas of src/contract are
 * the served document's components.
 */
import { describe, expect, test } from 'bun:test';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { componentSchemas } from '../../src/contract';
import { buildClient } from '../../src/web/bundle';
import { servedOpenApiDocument } from '../helpers/served-doc';

const ROOT = join(import.meta.dir, '../..');
const statements = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').split(';').map((s) => s.trim()).filter((s) => s !== '');

describe('the dashboard takes the contract as types only', () => {
  test('src/contract/types.ts holds `export type` statements only', () => {
    const text = readFileSync(join(ROOT, 'src/contract/types.ts'), 'utf8');
    const found = statements(text);
    expect(found.length).toBeGreaterThan(0);
    for (const s of found) expect(s).toMatch(/^export type \{[^}]+\} from '\.\/[a-z-]+'$/);
  });

  test('every dashboard import of src/contract is `import type` of types.ts', () => {
    const dir = join(ROOT, 'src/web/client');
    let seen = 0;
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
        if (!/from '\.\.\/\.\.\/contract\//.test(line)) continue;
        seen++;
        expect(`${f}: ${line}`).toMatch(/: import type \{[^}]+\} from '\.\.\/\.\.\/contract\/types';$/);
      }
    }
    expect(seen).toBeGreaterThan(0);
  });

  test('the dashboard bundle carries no schema: none of the contract\'s descriptions, no TypeBox', async () => {
    const { js } = await buildClient();
    expect(js).not.toContain('A working proxy is checked again within this many seconds');
    expect(js).not.toContain('The signing secret (Standard Webhooks)');
    expect(js).not.toContain('TypeBox');
  }, 60_000);
});

describe('one source', () => {
  test("the served document's component schemas are the contract's", async () => {
    const doc = await servedOpenApiDocument();
    for (const [name, schema] of Object.entries(componentSchemas)) {
      expect(doc.components.schemas[name]).toEqual(JSON.parse(JSON.stringify(schema)));
    }
  });
});
