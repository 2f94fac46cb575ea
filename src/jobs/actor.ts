/**
 * JobActor: one per check request. It owns the job's state and is the only
 * code that mutates it. Everything that happens to a job arrives as a message
 * in its mailbox (probe results, custom-URL results, a failed shard, cancel)
 * and is handled one at a time, so there are no locks.
 *
 * ## States
 *
 * The table and what happens in each state are in job-states.ts; every move
 * goes through `#moveTo`, the job's StateMachine (src/state-machine.ts),
 * which asserts the state it leaves, so an illegal
 * transition throws instead of passing. The refund rule of a failed job is
 * `#refundOnFailure`, in one place.
 *
 * Messages: probe results, custom-URL results, a failed shard or grant, and
 * cancel (posted first, ahead of waiting results). One clock: deps.now().
 * Its response and ports are declared in job-types.ts and ports.ts.
 *
 * ## Probes, proxies and samples
 *
 * The unit of work and of charge is the probe (a task); the unit of the
 * result is the proxy. With `samples` > 1 each proxy is `samples` tasks
 * (samples.ts: task t is sample t % samples of proxy floor(t / samples)):
 * the reservation, the scheduler's demand, grants, retries and the refund
 * count tasks (`#tasks`, `#probed`); `checked` (progress, total_checked, the
 * scan's total) counts proxies whose record is written. With samples = 1
 * the two are the same numbers.
 *
 * ## Proxies refused before any connection
 *
 * The constructor takes out the proxies the SSRF guard would refuse whatever
 * happens (literal private, loopback, reserved addresses while
 * ALLOW_PRIVATE_TARGETS is off: refused-targets.ts). The job runs on the
 * rest: they are neither reserved nor probed nor counted as checked; once
 * the result file is open they are written to it as failed
 * `blocked_target` records (and folded into `summary.errors`), and
 * `metadata.total_blocked` counts them.
 */
import { randomBytes } from 'node:crypto';
import { errorCode, isServiceError, ServiceError } from '../errors';
import { JOB_ERROR_CODES } from '../error-codes';
import { StateMachine } from '../state-machine';
import type { CustomUrlResult, ProbeResult, ProbeSettings } from '../probe/types';
import { autoType } from '../probe/codec/auto-verdict';
import { PROXY_TYPES, type ProxyType } from '../proxy/types';
import { resultUrls } from '../results/export';
import { buildProxyRecord, type ProxyRecord } from '../results/record';
import { invalidLinesJson } from '../results/result-json';
import type { SamplesBlock } from '../results/samples';
import { SummaryFold } from '../results/summary';
import type { ResultWriter } from '../results/writer';
import type { CheckUserInfo } from '../accounts/plan';
import { InsufficientQuotaError, isStoppedByClient, shuttingDown } from './job-errors';
import { JOB_STATES, JOB_TRANSITIONS, PHASE_OF, type JobState } from './job-states';
import type { CheckResponse, JobDeps, JobMetadata } from './job-types';
import { Mailbox } from './mailbox';
import { PROGRESS_PHASES, type WorkPhase } from './progress';
import type { ExecutionHandle, ResultBatch, Shard } from './ports';
import { jobMetadata, progressStateOf } from './job-report';
import { ProbeRetries } from './retries';
import { proxyOfTask, SampleSets } from './samples';
import { refusedResult, splitRefused } from './refused-targets';
import { probeShard, probeShardOf, splitBySettings, urlShards } from './shards';
import { originGeo, probeSettingsFor } from './probe-setup';
import { UrlStage } from './url-stage';
import type { JobWarning } from './judge-warnings';
import type { CheckRequest } from './request';

export { JOB_STATES, type JobState } from './job-states';
export type { CheckResponse, JobDeps, JobMetadata } from './job-types';

type Msg =
  | { kind: 'probe_results'; batch: ProbeResult[] }
  | { kind: 'url_results'; batch: CustomUrlResult[]; urlIndex: number }
  | { kind: 'shard_failed'; error: unknown }
  | { kind: 'cancel'; reason: Error };

export class JobActor {
  /** The client's jobId (progress channel, 409); reusable once the job ends. */
  readonly jobId: string;
  /** Unique per run: the ledger's and the scan row's job reference. */
  readonly runId: string = 'run_' + randomBytes(12).toString('base64url');
  readonly accountId: string;
  readonly #machine = new StateMachine<JobState>('job', JOB_TRANSITIONS, JOB_STATES.VALIDATING);
  /** The request with the proxies to probe (the refused ones taken out). */
  readonly #req: CheckRequest;
  /** Proxies refused before any connection (refused-targets.ts): recorded as failed, never probed nor charged. */
  readonly #refused: CheckRequest['proxies'];
  readonly #deps: JobDeps;
  readonly #startedAt: number;
  readonly #mailbox: Mailbox<Msg>;
  readonly #abort = new AbortController();

  #reserved = 0;
  /** The scan row exists (reserve succeeded): a failure must close it. */
  #scanOpen = false;
  /** `metadata.user` as the reservation left the account. */
  #user: CheckUserInfo | null = null;
  /** Proxies whose record is written. */
  #checked = 0;
  /** Probe tasks of the job: proxies x samples. */
  readonly #tasks: number;
  /** Tasks folded (a sample's final result: performed, or never run after every retry). */
  #probed = 0;
  /** One byte per task: folded or not. */
  #seen: Uint8Array;
  /** Sampled jobs: the samples of the proxies in flight, until each proxy's last (samples.ts). */
  readonly #sampleSets: SampleSets | null;
  /** Probes the checker failed to run (checker_overloaded), tried again; see retries.ts. */
  readonly #retries: ProbeRetries;
  /** metadata.warnings (judge-warnings.ts), known as the job starts. */
  readonly #warnings: readonly JobWarning[];
  #working: number[] = [];
  readonly #summary: SummaryFold;
  /** The job asked for `type: "auto"`: records and summary carry the protocols. */
  readonly #auto: boolean;
  /**
   * Some proxy of the list named its own protocol (ParsedProxy.protocol,
   * DECISIONS "Mixed lists"): its probes go out with that protocol's
   * settings, and (a job of one type) every record says its `type`.
   */
  readonly #mixed: boolean;
  /** buildProxyRecord's `auto`: true (auto), the job's type (a mixed list), or false. */
  readonly #recordType: boolean | ProxyType;
  /**
   * Auto jobs with custom URLs: each working proxy's `type` (1 + its index in
   * PROXY_TYPES; 0 unknown), so its custom URLs go through that protocol.
   */
  readonly #detected: Uint8Array | null;
  #urls: UrlStage | null = null;
  #writer: ResultWriter | null = null;
  #resultId: string | null = null;
  #exec: ExecutionHandle | null = null;
  /** Where the execution's grants go: the probing stage, then the custom-URL stage. */
  #grantTo: (n: number, exec: ExecutionHandle) => void = () => {};
  #next = 0;
  /** One object for every shard of the job: the probe workers send it to each thread once. A job that opted out of the https check gets no TLS judge. */
  get #settings(): ProbeSettings {
    return (this.#settingsOnce ??= this.#deps.settings(this.#req.type, this.#req.timeoutMs));
  }
  #settingsOnce: ProbeSettings | null = null;
  /** The settings of each protocol (auto jobs' custom URLs, a mixed list's proxies), made once per job. */
  #protocolSettingsOnce: ProbeSettings[] | null = null;
  #protocolSettings(type: ProxyType): ProbeSettings {
    const all = (this.#protocolSettingsOnce ??= PROXY_TYPES.map((t) => (t === this.#settings.type ? this.#settings : { ...this.#settings, type: t })));
    return all[PROXY_TYPES.indexOf(type)]!;
  }
  /** What proxy `index` is probed with: its own protocol's settings (a mixed list), else the job's. */
  readonly #probeSettings = (index: number): ProbeSettings => {
    const own = this.#req.proxies[index]!.protocol;
    return own === undefined ? this.#settings : this.#protocolSettings(own);
  };
  /** What proxy `index`'s custom URLs go through: its own protocol, else (auto) the one detected, else the job's. */
  readonly #urlSettings = (index: number): ProbeSettings => {
    const own = this.#req.proxies[index]!.protocol;
    if (own !== undefined) return this.#protocolSettings(own);
    const detected = this.#detected?.[index] ?? 0;
    return detected === 0 ? this.#settings : this.#protocolSettings(PROXY_TYPES[detected - 1]!);
  };
  #probeStartedAt: number | null = null;
  #failedIn: WorkPhase = PROGRESS_PHASES.VALIDATING;
  /** Settles the current stage (probing / validating_urls). */
  #stage: { resolve: () => void; reject: (e: unknown) => void } | null = null;
  #cancelReason: Error | null = null;
  /** Settles once the reservation is answered: resolves when the scan row exists, rejects when the job failed before. */
  readonly reserved: Promise<void>;
  #onReserved!: { resolve: () => void; reject: (e: unknown) => void };

  constructor(jobId: string, accountId: string, request: CheckRequest, deps: JobDeps) {
    this.jobId = jobId;
    this.accountId = accountId;
    this.#deps = deps;
    // the probes' own guard setting decides what is refused before any connection
    this.#settingsOnce = probeSettingsFor(deps.settings, request.type, request.timeoutMs, request.https);
    const { probe, refused } = splitRefused(request.proxies, this.#settingsOnce.allowPrivateTargets);
    const req = refused.length === 0 ? request : { ...request, proxies: probe };
    this.#req = req;
    this.#refused = refused;
    this.#startedAt = this.#clock();
    this.#tasks = req.proxies.length * req.samples;
    this.#seen = new Uint8Array(this.#tasks);
    this.#sampleSets = req.samples > 1 ? new SampleSets(req.samples) : null;
    this.#auto = req.type === 'auto';
    this.#mixed = req.proxies.some((p) => p.protocol !== undefined) || refused.some((p) => p.protocol !== undefined);
    this.#recordType = this.#auto ? true : this.#mixed ? (req.type as ProxyType) : false;
    // summary.https from the start when the check runs (a cluster's API node knows no TLS judge: its agents do)
    this.#summary = new SummaryFold({ protocols: this.#auto, rotating: this.#sampleSets !== null, https: this.#settings.tlsJudge !== undefined });
    this.#detected = this.#auto && req.customUrls.length > 0 ? new Uint8Array(req.proxies.length) : null;
    this.#retries = new ProbeRetries(this.#tasks, (n) => this.#exec?.addDemand(n));
    this.reserved = new Promise<void>((resolve, reject) => {
      this.#onReserved = { resolve, reject };
    });
    this.reserved.catch(() => {}); // read by whoever submits asynchronously; run() reports the same failure
    this.#warnings = deps.warnings?.(req) ?? [];
    this.#mailbox = new Mailbox<Msg>(
      (m) => this.#handle_(m),
      (err) => this.#stage?.reject(err),
    );
  }

  get state(): JobState {
    return this.#machine.state;
  }

  get checked(): number {
    return this.#checked;
  }

  /** Unique proxies the job probes (the request's, less those refused before any connection). */
  get proxies(): number {
    return this.#req.proxies.length;
  }

  /** Working proxies so far. */
  get working(): number {
    return this.#summary.totalWorking;
  }

  /**
   * Stop the job: a message, handled ahead of waiting results. No new probes
   * start; the job fails with `reason` (refunding what was not checked).
   * Safe to call twice; a job that has ended ignores it.
   */
  cancel(reason: Error = shuttingDown()): void {
    this.#mailbox.postFirst({ kind: 'cancel', reason });
  }

  /** Runs the job to its end. Resolves with the check response; rejects with the reason it failed. */
  async run(): Promise<CheckResponse> {
    const { ledger, now } = this.#deps;
    const req = this.#req;
    try {
      this.#publish();
      this.#moveTo([JOB_STATES.VALIDATING], JOB_STATES.RESERVING);
      // one unit per probe: unique proxies x samples
      const units = this.#tasks;
      const r = await ledger.reserve({
        accountId: this.accountId,
        runId: this.runId,
        // the jobId this run answers to (the client's, or the generated one): GET /checks/{jobId} finds its scan by it
        clientJobId: this.jobId,
        units,
        total: req.proxies.length,
        type: req.type,
        region: req.region,
        timeoutMs: req.timeoutMs,
        submitted: req.proxies.length + this.#refused.length + req.totalInvalid + req.totalDuplicates,
        now: now(),
      });
      if (!r.ok) throw new InsufficientQuotaError(r.required, r.available);
      this.#scanOpen = true;
      this.#user = r.user;
      this.#reserved = r.unlimited ? 0 : units;
      this.#onReserved.resolve();
      this.#throwIfCancelled();

      this.#resultId = this.#deps.newResultId();
      this.#writer = await this.#deps.openWriter(this.#resultId);
      for (const p of this.#refused) await this.#writeRecord(buildProxyRecord(p, refusedResult(p), null, this.#recordType));

      this.#moveTo([JOB_STATES.RESERVING], JOB_STATES.PROBING);
      this.#probeStartedAt = this.#clock();
      // every proxy refused: nothing to probe (an execution opened with no demand would never end)
      if (this.#tasks > 0) await this.#probeAll();

      if (req.customUrls.length > 0 && this.#working.length > 0) {
        this.#urls = new UrlStage(req.customUrls, this.#working.length, this.#clock());
        this.#moveTo([JOB_STATES.PROBING], JOB_STATES.VALIDATING_URLS);
        await this.#validateUrls();
      }

      this.#moveTo([JOB_STATES.PROBING, JOB_STATES.VALIDATING_URLS], JOB_STATES.WRITING);
      // Every probe was folded: the refund (probes the checker never ran) is known,
      // and the balance read now is final; the result file carries it too (the
      // ClearProxy CLI reads metadata.user from the file). With nothing to refund
      // the reservation's picture is final: no extra query.
      const refund = this.#unchecked();
      const user = refund === 0 && this.#user !== null ? this.#user : await ledger.userInfo(this.accountId, now());
      const metadata = { user, ...this.#metadata() };
      const summary = this.#summary.result();
      await this.#writer.finish({
        summary,
        metadata,
        invalid_lines: invalidLinesJson(req.invalidLines),
        ...(this.#urls !== null ? { custom_url_validation: this.#urls.validation(this.#proxyAt, this.#clock()) } : {}),
      });
      const resultUrl = this.#deps.signLink(this.#resultId);
      const response: CheckResponse = { summary, metadata, result_url: resultUrl, result_urls: resultUrls(resultUrl) };
      await ledger.complete({
        accountId: this.accountId,
        runId: this.runId,
        checked: this.#checked,
        working: this.#summary.totalWorking,
        resultRef: this.#resultId,
        refund,
        // kept with the scan: GET /checks/{jobId} answers it (with fresh links) after this connection is gone
        response,
        now: now(),
      });
      this.#reserved = 0;
      this.#scanOpen = false;
      this.#moveTo([JOB_STATES.WRITING], JOB_STATES.COMPLETED);
      this.#publish({ resultUrl });
      return response;
    } catch (err) {
      this.#onReserved.reject(err);
      await this.#fail(err);
      throw err;
    } finally {
      this.#retries.stop();
      this.#exec?.cancel();
    }
  }

  // ---- stages ---------------------------------------------------------------

  #probeAll(): Promise<void> {
    const total = this.#tasks;
    return new Promise<void>((resolve, reject) => {
      this.#stage = { resolve, reject };
      if (this.#cancelReason !== null) return reject(this.#cancelReason);
      // One opening for the whole job: grants go to probes, then to URL pairs.
      this.#grantTo = (n, exec) => this.#dispatchProbes(n, exec);
      this.#exec = this.#deps.execution.open({
        // the run's id, unique per run (the client's jobId may be used again once a job ended)
        runId: this.runId,
        region: this.#req.region,
        demand: total,
        onGrant: (n, exec) => this.#grantTo(n, exec),
        onError: (error) => this.#mailbox.postFirst({ kind: 'shard_failed', error }),
      });
    });
  }

  #dispatchProbes(n: number, exec: ExecutionHandle): void {
    const again = this.#retries.take(n);
    const from = this.#next;
    const samples = this.#req.samples;
    this.#next = Math.min(this.#tasks, from + n - again.length);
    const shard =
      again.length === 0
        ? probeShard(this.#req.proxies, from, this.#next, this.#settings, samples)
        : probeShardOf(this.#req.proxies, [...again, ...Array.from({ length: this.#next - from }, (_, k) => from + k)], this.#settings, samples);
    const onBatch = (batch: ResultBatch) => this.#mailbox.post({ kind: 'probe_results', batch: batch as ProbeResult[] });
    if (!this.#mixed) return this.#runShard(exec, shard, onBatch);
    for (const part of splitBySettings(shard, (t) => this.#probeSettings(proxyOfTask(t, samples)))) this.#runShard(exec, part, onBatch);
  }

  #validateUrls(): Promise<void> {
    this.#next = 0;
    return new Promise<void>((resolve, reject) => {
      this.#stage = { resolve, reject };
      if (this.#cancelReason !== null) return reject(this.#cancelReason);
      this.#grantTo = (n, exec) => this.#dispatchUrls(n, exec);
      this.#exec!.addDemand(this.#urls!.total);
    });
  }

  #dispatchUrls(n: number, exec: ExecutionHandle): void {
    const from = this.#next;
    this.#next = Math.min(this.#urls!.total, from + n);
    const settings = this.#detected === null && !this.#mixed ? this.#settings : this.#urlSettings;
    for (const { shard, urlIndex } of urlShards(this.#req.proxies, this.#working, this.#req.customUrls, from, this.#next, settings)) {
      this.#runShard(exec, shard, (batch) => this.#mailbox.post({ kind: 'url_results', batch: batch as CustomUrlResult[], urlIndex }));
    }
  }

  /** A shard that fails (or ends short) while the job is live fails the job, so a stage can never wait forever. */
  #runShard(exec: ExecutionHandle, shard: Shard, onBatch: (batch: ResultBatch) => void): void {
    exec.run(shard, onBatch, this.#abort.signal).then(undefined, (error: unknown) => {
      if (!this.#abort.signal.aborted) this.#mailbox.post({ kind: 'shard_failed', error });
    });
  }

  // ---- messages -------------------------------------------------------------

  #handle_(m: Msg): void | Promise<void> {
    if (this.#cancelReason !== null || this.#machine.final) return;
    switch (m.kind) {
      case 'cancel':
        return this.#onCancel(m.reason);
      case 'probe_results':
        return this.#onProbeResults(m.batch);
      case 'url_results':
        return this.#onUrlResults(m.batch, m.urlIndex);
      case 'shard_failed':
        throw new ServiceError(JOB_ERROR_CODES.SHARD_FAILED, 'a probe shard failed', { cause: m.error });
    }
  }

  #onCancel(reason: Error): void {
    this.#cancelReason = reason;
    this.#abort.abort(reason);
    this.#exec?.cancel();
    this.#stage?.reject(reason);
  }

  async #onProbeResults(batch: ProbeResult[]): Promise<void> {
    const probedBefore = this.#probed;
    let fresh = 0;
    for (const r of batch) {
      if (this.#seen[r.index] !== 0) continue; // a result is folded once, whatever happens
      if (r.error?.code === 'checker_overloaded' && this.#retryOurs(r.index, r.error.checkerLagMs !== undefined)) continue; // ours: tried again later
      this.#seen[r.index] = 1;
      this.#probed++;
      if (this.#sampleSets === null) {
        await this.#addRecord(r.index, r, null);
        fresh++;
        continue;
      }
      const folded = this.#sampleSets.add(r); // the proxy's record once its last sample is in
      if (folded === null) continue;
      await this.#addRecord(folded.proxy, folded.result, folded.samples);
      fresh++;
    }
    this.#checked += fresh;
    this.#deps.counters?.probeResults(this.#probed - probedBefore); // once per batch
    this.#publish();
    if (this.#checked === this.#req.proxies.length) this.#stageDone();
  }

  /** The record of proxy `index` from its probe result (the first passing sample's, for a sampled job). */
  async #addRecord(index: number, r: ProbeResult, samples: SamplesBlock | null): Promise<void> {
    const info = originGeo(this.#deps.geo, r);
    const record = buildProxyRecord(this.#req.proxies[index]!, r, info, this.#recordType, samples);
    if (r.status === 'working') {
      this.#working.push(index);
      if (this.#detected !== null) this.#detected[index] = PROXY_TYPES.indexOf(autoType(record.protocols ?? []) ?? 'http') + 1;
    }
    await this.#writeRecord(record);
  }

  /** A record into the summary and the result file. */
  #writeRecord(record: ProxyRecord): Promise<void> {
    this.#summary.add(record);
    return this.#writer!.addProxy(record);
  }

  #onUrlResults(batch: CustomUrlResult[], urlIndex: number): void {
    const all = this.#urls!.add(batch, urlIndex);
    this.#publish();
    if (all) this.#stageDone();
  }

  #stageDone(): void {
    const s = this.#stage;
    this.#stage = null;
    s?.resolve();
  }

  // ---- helpers --------------------------------------------------------------

  /** The only way the state changes: asserts the state it leaves (job-states.ts). */
  #moveTo(from: readonly JobState[], to: JobState): void {
    this.#machine.move(from, to);
    if (to !== JOB_STATES.COMPLETED && to !== JOB_STATES.FAILED) {
      this.#failedIn = PHASE_OF[to] as WorkPhase;
      this.#publish();
    }
  }

  #clock(): number {
    return this.#deps.now().getTime();
  }

  /**
   * A probe the checker could not run (`lag`: it timed out while its thread
   * was late, src/probe/codec/checker-lag.ts; else a local resource ran
   * out): true when it is tried again later, counted per reason. Warns once
   * per job.
   */
  #retryOurs(index: number, lag: boolean): boolean {
    if (this.#retries.waiting === 0 && this.#retries.notTried === 0 && !this.#warnedOverload) {
      this.#warnedOverload = true;
      this.#deps.log.warn(
        lag
          ? 'the checker ran late reading its sockets (CPU saturated); probes that timed out then are tried again'
          : 'the checker ran out of local resources (open-file limit, MAX_IN_FLIGHT); probes are tried again',
        { jobId: this.jobId },
      );
    }
    const again = this.#retries.retry(index);
    if (again) {
      if (lag) this.#retriedLag++;
      this.#deps.counters?.probesRetried?.(lag ? 'checker_lag' : 'local_resources', 1);
    }
    return again;
  }
  #warnedOverload = false;
  /** Probes tried again because they timed out while the checker was late (metadata.retried_checker_lag). */
  #retriedLag = 0;

  /**
   * Units reserved and not performed: what a completed job gives back. A unit
   * is a probe (a sample): the ones folded, less those the checker could not
   * run (never charged); a sampled proxy cut short by a cancel pays for the
   * samples it had.
   */
  #unchecked(): number {
    return this.#reserved - Math.min(this.#reserved, this.#probed - this.#retries.notTried);
  }

  /** The refund rule of a failed job (header: "failed"). */
  #refundOnFailure(byClient: boolean): number {
    return byClient ? this.#unchecked() : this.#reserved;
  }

  readonly #proxyAt = (i: number) => {
    const p = this.#req.proxies[i]!;
    return { host: p.host, port: p.port };
  };

  #throwIfCancelled(): void {
    if (this.#cancelReason !== null) throw this.#cancelReason;
  }

  #metadata(): JobMetadata {
    return jobMetadata(this.jobId, this.#req, this.#checked, this.#clock() - this.#startedAt, this.#refused.length, this.#warnings, this.#retriedLag);
  }

  #publish(final: { resultUrl: string | null } | null = null): void {
    const u = this.#urls;
    const state = progressStateOf(this.jobId, this.#req, PHASE_OF[this.#machine.state], {
      checked: this.#checked,
      working: this.#summary.totalWorking,
      urls: u === null ? null : { done: u.done, total: u.total, startedAt: u.startedAt },
      probeStartedAt: this.#probeStartedAt,
      now: this.#clock(),
    });
    if (this.#machine.state === JOB_STATES.FAILED) state.failedIn = this.#failedIn;
    this.#deps.publish(state, final);
  }


  async #fail(err: unknown): Promise<void> {
    if (this.#machine.state === JOB_STATES.FAILED) return;
    this.#moveTo([JOB_STATES.VALIDATING, JOB_STATES.RESERVING, JOB_STATES.PROBING, JOB_STATES.VALIDATING_URLS, JOB_STATES.WRITING], JOB_STATES.FAILED);
    this.#abort.abort();
    this.#exec?.cancel();
    const { ledger, log, now } = this.#deps;
    try {
      await this.#writer?.abort();
    } catch (e) {
      log.warn('result writer abort failed', { jobId: this.jobId, err: e });
    }
    if (this.#scanOpen) {
      const byClient = isStoppedByClient(err);
      const settlement = {
        accountId: this.accountId,
        runId: this.runId,
        checked: this.#checked,
        working: this.#summary.totalWorking,
        refund: this.#refundOnFailure(byClient),
        // the history keeps the stable code; the log has the detail
        error: errorCode(err),
        cancelled: byClient,
        now: now(),
      };
      this.#reserved = 0;
      this.#scanOpen = false;
      try {
        await ledger.fail(settlement);
      } catch (e) {
        // The scan stays `running`: tried again while we run (settlements.ts), else refunded by the
        // orphan sweep of a live node once this node's lease has expired.
        log.error('settling a failed job failed; it is tried again', { jobId: this.jobId, err: e });
        this.#deps.retrySettlement(this.runId, () => ledger.fail(settlement));
      }
    }
    this.#publish();
  }
}
