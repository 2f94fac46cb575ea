/** Tests for src/cli/config-file.ts (pure parts): the config path, URL normalising, and the flag > env > file > default precedence. */
import { describe, expect, test } from 'bun:test';
import { configPath, DEFAULT_URL, normaliseBaseUrl, resolveSettings } from '../../src/cli/config-file';
import { CliError, EXIT } from '../../src/cli/exit-codes';

describe('configPath', () => {
  test('XDG_CONFIG_HOME when absolute, else ~/.config', () => {
    expect(configPath({ XDG_CONFIG_HOME: '/x/cfg' }, '/home/u')).toBe('/x/cfg/proxycheck/config.json');
    expect(configPath({}, '/home/u')).toBe('/home/u/.config/proxycheck/config.json');
    expect(configPath({ XDG_CONFIG_HOME: '' }, '/home/u')).toBe('/home/u/.config/proxycheck/config.json');
    expect(configPath({ XDG_CONFIG_HOME: 'relative' }, '/home/u')).toBe('/home/u/.config/proxycheck/config.json');
  });
});

describe('normaliseBaseUrl', () => {
  test('trailing slashes go; bad URLs are usage errors naming the source', () => {
    expect(normaliseBaseUrl('http://h:1/', '--url')).toBe('http://h:1');
    expect(normaliseBaseUrl(' https://h/api// ', '--url')).toBe('https://h/api');
    for (const bad of ['h:1', 'ftp://h', 'http://h/?a=1', 'http://h/#x']) {
      try {
        normaliseBaseUrl(bad, 'PROXYCHECK_URL');
        throw new Error('no error');
      } catch (err) {
        expect(err).toBeInstanceOf(CliError);
        expect((err as CliError).exitCode).toBe(EXIT.USAGE);
        expect((err as CliError).message).toStartWith('PROXYCHECK_URL: ');
      }
    }
  });
});

describe('resolveSettings', () => {
  const env = { PROXYCHECK_URL: 'http://env:2', PROXYCHECK_API_KEY: 'envkey' };
  const file = { url: 'http://file:3', key: 'filekey' };

  test('flags win over env, env over the file, the file over the default', () => {
    expect(resolveSettings({ url: 'http://flag:1', key: 'flagkey' }, env, file)).toEqual({ url: 'http://flag:1', key: 'flagkey', urlSource: 'flag', keySource: 'flag' });
    expect(resolveSettings({}, env, file)).toEqual({ url: 'http://env:2', key: 'envkey', urlSource: 'env', keySource: 'env' });
    expect(resolveSettings({}, {}, file)).toEqual({ url: 'http://file:3', key: 'filekey', urlSource: 'config', keySource: 'config' });
    expect(resolveSettings({}, {}, null)).toEqual({ url: DEFAULT_URL, key: undefined, urlSource: 'default', keySource: 'none' });
  });

  test('each setting independently; blank values are absent', () => {
    expect(resolveSettings({ key: 'k' }, { PROXYCHECK_URL: ' ' }, { url: 'http://file:3' })).toEqual({ url: 'http://file:3', key: 'k', urlSource: 'config', keySource: 'flag' });
    expect(resolveSettings({}, { PROXYCHECK_API_KEY: '  kk  ' }, { key: '' })).toMatchObject({ key: 'kk', keySource: 'env' });
  });
});
