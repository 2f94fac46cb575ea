/**
 * The CLI's commands other than `check` (src/cli/check-command.ts), the
 * job commands (src/cli/job-commands.ts), `pool` (src/cli/pool-command.ts) and
 * `webhook` (src/cli/webhook-command.ts):
 * `me`, `regions`, `health`, `login`, `help`, `--version`, and `runCommand`,
 * the dispatcher main.ts calls. Each returns its exit code or throws a CliError.
 */
import pkg from '../../package.json';
import { ApiClient } from './api-client';
import { COMMAND_USAGE, USAGE, type Command, type GlobalOptions } from './args';
import { runCheck } from './check-command';
import { runCancel, runStatus, runWait } from './job-commands';
import { runPool } from './pool-command';
import { runWebhook } from './webhook-command';
import { configPath, normaliseBaseUrl, readConfigFile, resolveSettings, writeConfigFile, type CliSettings, DEFAULT_URL } from './config-file';
import { EXIT, usageError } from './exit-codes';
import { terminalTraits, type CliIo } from './io';
import { renderHealth, renderMe, renderRegions } from './tables';

const json = (io: CliIo, v: unknown) => io.stdout.write(`${JSON.stringify(v, null, 2)}\n`);

async function settingsFor(g: GlobalOptions, io: CliIo): Promise<CliSettings> {
  const file = await readConfigFile(configPath(io.env, io.home));
  return resolveSettings(g, io.env, file);
}

export async function runCommand(command: Command, g: GlobalOptions, io: CliIo): Promise<number> {
  switch (command.name) {
    case 'help':
      io.stdout.write(`${command.topic === undefined ? USAGE : COMMAND_USAGE[command.topic]}\n`);
      return EXIT.OK;
    case 'version':
      io.stdout.write(`proxycheck ${pkg.version}\n`);
      return EXIT.OK;
    case 'login':
      return login(command.key !== undefined ? { ...g, key: command.key } : g, io);
    default:
      break;
  }
  const settings = await settingsFor(g, io);
  const client = new ApiClient({ url: settings.url, key: settings.key });
  const traits = terminalTraits(io.stdout, io.env, g.color === false);
  switch (command.name) {
    case 'check':
      return runCheck(command, g, settings, io);
    case 'status':
      return runStatus(command.jobId, g, client, io);
    case 'wait':
      return runWait(command, g, client, io);
    case 'cancel':
      return runCancel(command.jobId, g, client, io);
    case 'pool':
      return runPool(command, g, client, io);
    case 'webhook':
      return runWebhook(command, g, client, io);
    case 'me': {
      const me = await client.me(io.signal);
      if (g.json) json(io, me);
      else io.stdout.write(`${renderMe(me, { links: command.links, ascii: traits.ascii, now: new Date(io.now()) })}\n`);
      return EXIT.OK;
    }
    case 'regions': {
      const r = await client.regions(io.signal);
      if (g.json) json(io, r);
      else io.stdout.write(`${renderRegions(r, await client.oneMachine(io.signal))}\n`);
      return EXIT.OK;
    }
    case 'health': {
      const { status, body } = await client.health(io.signal);
      if (g.json) json(io, body);
      else io.stdout.write(`${renderHealth(body, settings.url)}\n`);
      if (status === 503 || body.status !== 'ok') {
        if (!g.json) io.stderr.write('The service is degraded (HTTP 503).\n');
        return EXIT.NETWORK;
      }
      return EXIT.OK;
    }
  }
}

/**
 * `login` (alias `set-key`): the key from its argument or --key, then
 * PROXYCHECK_API_KEY, then standard input; the URL
 * from --url, PROXYCHECK_URL, the existing file, else asked on a terminal
 * (Enter keeps the default shown) or the default. Verified with
 * GET /me before anything is written.
 */
async function login(g: GlobalOptions, io: CliIo): Promise<number> {
  const path = configPath(io.env, io.home);
  const existing = await readConfigFile(path).catch(() => null); // a broken file is replaced
  const resolved = resolveSettings(g, io.env, existing === null ? null : { ...(existing.url !== undefined ? { url: existing.url } : {}) });
  let url = resolved.url;
  if (resolved.urlSource === 'default' && io.stdin.isTTY) {
    const typed = (await io.stdin.readLine(`Service URL [${DEFAULT_URL}]: `, false)).trim();
    if (typed !== '') url = normaliseBaseUrl(/^[a-z][a-z0-9+.-]*:\/\//i.test(typed) ? typed : `http://${typed}`, 'the URL');
  }
  let key = resolved.key;
  if (key === undefined) {
    const line = await io.stdin.readLine(io.stdin.isTTY ? `API key for ${url}: ` : '', io.stdin.isTTY);
    key = line.trim();
    if (key === '') throw usageError('no API key given (pass it as the argument, or type it when asked)');
  }
  const me = await new ApiClient({ url, key }).me(io.signal);
  await writeConfigFile(path, { url, key });
  if (g.json) json(io, { url, email: me.user.email, config: path });
  else io.stdout.write(`Logged in to ${url} as ${me.user.email}. Saved the key to ${path} (mode 0600).\n`);
  return EXIT.OK;
}
