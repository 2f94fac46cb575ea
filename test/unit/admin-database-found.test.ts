import { describe, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  embeddedDatabaseExists,
  emptyDatabaseMessage,
  noEmbeddedDatabaseMessage,
  redactDatabaseUrl,
  unreachableDatabaseMessage,
} from '../../src/admin/database-found';

describe('admin: where the database is not', () => {
  test('redactDatabaseUrl hides the password only', () => {
    expect(redactDatabaseUrl('postgres://pc:s3cret@db.internal:5432/pc')).toBe('postgres://pc:***@db.internal:5432/pc');
    expect(redactDatabaseUrl('postgres://postgres@127.0.0.1:5432/postgres')).toBe('postgres://postgres@127.0.0.1:5432/postgres');
    expect(redactDatabaseUrl('not a url')).toBe('(unparsable URL)');
  });

  test('embeddedDatabaseExists: a PGlite data dir has pglite/PG_VERSION', () => {
    const dir = mkdtempSync(join(tmpdir(), 'admin-found-'));
    try {
      expect(embeddedDatabaseExists(join(dir, 'none'))).toBe(false);
      mkdirSync(join(dir, 'pglite'));
      expect(embeddedDatabaseExists(dir)).toBe(false);
      writeFileSync(join(dir, 'pglite', 'PG_VERSION'), '17\n');
      expect(embeddedDatabaseExists(dir)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('the messages name what was looked at and the ways out', () => {
    const set = noEmbeddedDatabaseMessage('/srv/pc/data', true, '/home/u');
    expect(set).toStartWith('no database in DATA_DIR /srv/pc/data; the admin command never creates one.');
    expect(set).toContain('DATABASE_URL');
    expect(set).toContain('ADMIN_URL with ADMIN_TOKEN');
    expect(noEmbeddedDatabaseMessage('data', false, '/home/u')).toStartWith('no database in DATA_DIR /home/u/data (DATA_DIR is not set');
    const down = unreachableDatabaseMessage('postgres://a:b@h/db', 'connect ECONNREFUSED');
    expect(down).toStartWith('cannot reach the PostgreSQL database DATABASE_URL=postgres://a:***@h/db: connect ECONNREFUSED.');
    expect(down).not.toContain(':b@');
    expect(emptyDatabaseMessage('postgres://h/db')).toContain("holds none of the service's tables");
  });
});
