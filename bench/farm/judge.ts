/**
 * The judge as a child process of the benchmark (so its sockets and CPU are
 * not the service's): startJudgeServer from src/judge/server.ts on
 * 127.0.0.1, any free port, signing its answers with JUDGE_KEY from the
 * environment (the service is given the same JUDGE_KEY; unset: unsigned).
 * Prints one JSON line {"url", "pid"} on stdout and serves until its stdin
 * closes or it gets SIGTERM.
 */
import { startJudgeServer } from '../../src/judge/server';

const key = process.env.JUDGE_KEY || undefined;
const judge = await startJudgeServer({ host: '127.0.0.1', port: 0, ...(key !== undefined ? { key } : {}) });
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void judge.close().finally(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.stdout.write(JSON.stringify({ url: judge.url, pid: process.pid }) + '\n');
