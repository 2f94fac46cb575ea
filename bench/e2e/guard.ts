/**
 * Runs one command as a child and ties its life to this process's stdin:
 * when stdin closes (the benchmark runner exited, even by SIGKILL) or this
 * process gets SIGTERM / SIGINT, the child gets SIGTERM, then SIGKILL after
 * 5 s. Prints one JSON line {"pid": <child pid>} (the pid to measure), exits
 * with the child's exit code.
 * Usage: bun bench/e2e/guard.ts <command> [args...]
 */
const cmd = process.argv.slice(2);
if (cmd.length === 0) {
  process.stderr.write('usage: guard.ts <command> [args...]\n');
  process.exit(2);
}
const child = Bun.spawn(cmd, { stdin: 'ignore', stdout: 'inherit', stderr: 'inherit', env: process.env });
process.stdout.write(JSON.stringify({ pid: child.pid }) + '\n');

let killTimer: ReturnType<typeof setTimeout> | null = null;
const stopChild = () => {
  if (killTimer !== null) return;
  try {
    child.kill('SIGTERM');
  } catch {
    // gone
  }
  killTimer = setTimeout(() => {
    try {
      child.kill('SIGKILL');
    } catch {
      // gone
    }
  }, 5000);
};
process.on('SIGTERM', stopChild);
process.on('SIGINT', stopChild);
process.stdin.on('end', stopChild);
process.stdin.on('close', stopChild);
process.stdin.resume();
export {};
const code = await child.exited;
if (killTimer !== null) clearTimeout(killTimer);
process.exit(code ?? 1);
