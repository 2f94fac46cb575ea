/**
 * The dependency rule (docs/DESIGN.md "Layers"): layers point one way.
 *
 *   entry   src/main.ts (+ help.ts, runtime-settings.ts, run-process.ts), src/server.ts (composition root), src/agent.ts (the agent role's), src/compose/** (their steps), src/stop-steps.ts (their undo list), src/cli/**, src/admin/cli.ts, workers/**
 *   http    src/http/**, src/web/** server side, src/admin/routes.ts, src/admin/app.ts
 *   jobs    src/jobs/**, src/cluster/** (the cluster's adapters of the job ports), src/admin/** services (commands, args, lock, throttle)
 *   domain  src/accounts/**, src/results/**, src/judge/**, src/metrics/**, src/probe/workers/** (probe execution),
 *           src/contract/** (the API's schemas, one per shape: the document's and the types of server, CLI and dashboard),
 *           src/pools/** (pools of proxies kept checked), src/gateway/** but codec/ (the gateway's upstream choice),
 *           src/webhooks/** (endpoints, the outbox, the delivery loop)
 *   probe   src/probe/*.ts (but types.ts), src/probe/net/**
 *   leaves  src/probe/codec/**, src/probe/types.ts (the probe's data model), src/proxy/**, src/geo/**,
 *           src/gateway/codec/** (the gateway's front codecs),
 *           src/{regions,log,config,settings-catalogue,limits,fd-guard,secrets,version,job-id,state-machine,clock}.ts
 *   db      db/**
 *   root    src/errors.ts (the one error root: every layer may throw its errors), src/error-codes.ts (their codes)
 *
 * A module may import its own layer and the layers below it, never one above.
 * Besides: no cycles; the browser code (src/web/client/**) imports only
 * itself and the pure modules it shares with the service (BROWSER_SHARED,
 * free of node modules), and the API contract's types (src/contract/types.ts,
 * `import type` only: nothing of it reaches the bundle); probe code and workers never see db, http, jobs or accounts; leaves
 * never see db; pure modules do no I/O; production code never imports tests or
 * tooling; every module of src, workers and db belongs to a layer.
 *
 * Run: `npm run lint:deps` (part of `npm test`).
 *
 * TypeScript is parsed with swc (@swc/core): dependency-cruiser (17) cannot use
 * typescript@7 (the compiler this repo type-checks with). swc's extractor
 * always keeps type-only imports (`import type`, `import { type X }`), marked
 * "type-only", so they count like any other import: they couple layers just
 * the same (test/unit/dependency-rule.test.ts proves it). Should the parser
 * ever be "tsc" again, set tsPreCompilationDeps: true to keep that.
 */
try {
  require.resolve('@swc/core');
} catch {
  throw new Error(
    '.dependency-cruiser.cjs: @swc/core is not installed (run npm install); without it dependency-cruiser would skip every .ts file and pass.',
  );
}

/** Top to bottom. */
const LAYERS = [
  { name: 'entry', path: ['^src/(main|run-process|runtime-settings|server|agent|stop-steps|help)\\.ts$', '^src/compose/', '^src/cli/', '^src/admin/cli\\.ts$', '^workers/'] },
  { name: 'http', path: ['^src/http/', '^src/web/(?!client/)', '^src/admin/(routes|app)\\.ts$'] },
  { name: 'jobs', path: ['^src/jobs/', '^src/cluster/', '^src/admin/(?!(cli|routes|app)\\.ts$)'] },
  { name: 'domain', path: ['^src/(accounts|results|judge|metrics|pools|webhooks|contract)/', '^src/probe/workers/', '^src/gateway/(?!codec/)'] },
  { name: 'probe', path: ['^src/probe/(?!(codec|workers)/|types\\.ts$)'] },
  {
    name: 'leaves',
    path: [
      '^src/probe/codec/',
      '^src/gateway/codec/',
      '^src/probe/types\\.ts$',
      '^src/(proxy|geo)/',
      '^src/(regions|log|config|settings-catalogue|limits|fd-guard|secrets|version|job-id|state-machine|clock)\\.ts$',
    ],
  },
  { name: 'db', path: ['^db/'] },
  { name: 'root', path: ['^src/(errors|error-codes)\\.ts$'] },
];

const WEB_CLIENT = '^src/web/client/';
/** The API contract's types for the dashboard: a module of `export type` only (test/unit/contract-types.test.ts keeps it so, and the dashboard's imports of it `import type`). */
const CONTRACT = '^src/contract/types\\.ts$';
/** Pure modules the dashboard shares with the service (the list parser, the gateway's URLs): no node modules in them. */
const BROWSER_SHARED = ['^src/proxy/', '^src/gateway/(urls|username)\\.ts$', '^src/pools/pool-id\\.ts$'];
const ALL_LAYERS = LAYERS.flatMap((l) => l.path);

/** upward-from-<layer>: that layer imports a layer above it. */
const upward = LAYERS.slice(1).map((layer, i) => {
  const above = LAYERS.slice(0, i + 1);
  return {
    name: `upward-from-${layer.name}`,
    comment:
      `${layer.name} imports ${above.map((l) => l.name).join('/')}: layers point one way (docs/DESIGN.md "Layers"); ` +
      `${layer.name} may import only ${[layer, ...LAYERS.slice(i + 2)].map((l) => l.name).join(', ')}.`,
    severity: 'error',
    from: { path: layer.path },
    to: { path: above.flatMap((l) => l.path) },
  };
});

/** Node modules that do I/O (network, files, processes, threads). */
const IO_MODULES = '^(node:)?(fs|fs/promises|net|tls|dns|dns/promises|dgram|http|https|http2|child_process|cluster|worker_threads)$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A cycle: these modules import each other (possibly through others). Move the shared part below both.',
      severity: 'error',
      from: { path: '^(src|workers|db)/' },
      to: { circular: true },
    },
    ...upward,
    {
      name: 'probe-and-workers-isolated',
      comment: 'Probe code and the workers never see the database, the HTTP layer, jobs or accounts.',
      severity: 'error',
      from: { path: ['^src/probe/', '^workers/'] },
      to: { path: ['^db/', '^src/(http|web|admin|jobs|accounts|results)/', '^src/server\\.ts$'] },
    },
    {
      name: 'leaves-no-db',
      comment: 'Codecs, proxy, geo and the small shared modules (leaves) never see the database.',
      severity: 'error',
      from: { path: LAYERS.find((l) => l.name === 'leaves').path },
      to: { path: '^db/' },
    },
    {
      name: 'pure-no-io',
      comment: 'Pure modules (codecs, proxy parsing, SQL builders, record/summary folds) do no I/O: no sockets, files, processes, threads or db.',
      severity: 'error',
      from: {
        path: [
          '^src/probe/codec/',
          '^src/gateway/codec/',
          '^src/gateway/(upstream-choice|username|usage|urls|front-session|admit|retry-policy)\\.ts$',
          '^src/pools/(?!store\\.ts$)[^/]+\\.ts$',
          '^src/webhooks/(types|schedule|seal|delivery-states|payloads|outbox-sql)\\.ts$',
          '^src/proxy/',
          '^src/accounts/[^/]+-sql\\.ts$',
          '^src/results/(format|record|summary|custom-url-summary|samples|pg-store-sql)\\.ts$',
          '^src/(regions|errors|error-codes|state-machine)\\.ts$',
        ],
      },
      to: { path: [IO_MODULES, '^db/'] },
    },
    {
      name: 'web-client-browser-only',
      comment:
        'The dashboard browser code (src/web/client) imports only itself, npm packages, the pure modules it shares with the service (BROWSER_SHARED: the list parser, the gateway URLs) and the contract\'s types (src/contract/types.ts): no server code, no node modules.',
      severity: 'error',
      from: { path: WEB_CLIENT },
      to: { pathNot: [WEB_CLIENT, '(^|/)node_modules/', ...BROWSER_SHARED, CONTRACT] },
    },
    {
      name: 'browser-shared-no-node',
      comment: 'The modules the dashboard shares with the service (BROWSER_SHARED) run in the browser too: no node modules, and nothing outside BROWSER_SHARED.',
      severity: 'error',
      from: { path: BROWSER_SHARED },
      to: { pathNot: [...BROWSER_SHARED, '(^|/)node_modules/'] },
    },
    {
      name: 'no-tooling-in-production',
      comment: 'src, workers and db never import tests, benchmarks or scripts.',
      severity: 'error',
      from: { path: '^(src|workers|db)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'unlayered-module',
      comment: 'This module of src/workers/db is in no layer: add its folder to LAYERS in .dependency-cruiser.cjs (and docs/DESIGN.md "Layers").',
      severity: 'error',
      from: { path: '^(src|workers|db)/', pathNot: [...ALL_LAYERS, WEB_CLIENT] },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that does not resolve (a typo, or the resolver is misconfigured and the rule would see nothing).',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true, pathNot: '^bun(:|$)' },
    },
  ],
  options: {
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: '(^|/)node_modules/' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
