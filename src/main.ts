/**
 * The service's entry: `--help` and `--version` answer and exit; otherwise
 * the runtime settings (src/runtime-settings.ts) are put in place, the
 * process replacing itself once when the environment lacks them, and the
 * process runs (src/run-process.ts, loaded only then: nothing heavy is
 * loaded twice).
 */
import { helpRequest, helpText, versionText } from './help';
import { applyRuntimeSettings } from './runtime-settings';

const asked = helpRequest(process.argv.slice(2));
if (asked !== null) {
  process.stdout.write(asked === 'help' ? helpText() : versionText());
  process.exit(0);
}
const unapplied = applyRuntimeSettings();
if (unapplied !== null) process.stderr.write(`runtime settings not applied: ${unapplied.why}\n`);
const { runProcess } = await import('./run-process');
await runProcess();
