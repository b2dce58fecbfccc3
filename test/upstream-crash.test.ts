// One paid job per task across a crash (docs/guides/channels.md#what-an-operator-can-rely-on), for
// the `dashscope` protocol: the shared harness (helpers/upstream-crash.ts) runs a mediagate child
// process against a fake DashScope behind a proxy in this process and SIGKILLs it at the worst
// moments: after the upstream accepted a submission but before the child got the answer (so
// before it stored the upstream id), while it polls, and while it copies an output the fake serves
// slowly. After a restart every task reaches one final state and the fake saw exactly one
// accepted submission per task; a copied output is whole, stored once, and leaves no partial file.
// test/upstream-vendors-crash.test.ts runs the same kill points for the six protocols of 2026.
import { startDashscopeFake } from './fakes/dashscope.js';
import { upstreamCrashSuite } from './helpers/upstream-crash.js';

const DASHSCOPE_KEY = 'sk-dashscope-test';

upstreamCrashSuite('dashscope', [
  {
    protocol: 'dashscope',
    upstreamModel: 'wan2.7-t2v',
    body: {},
    lost: 'upstream_submission_unknown',
    startFake: () => startDashscopeFake({ apiKey: DASHSCOPE_KEY, queuedMs: 300, runMs: 3_000 }),
    channel: () => Promise.resolve({ fields: { api_key_env: 'T_DASHSCOPE' }, env: { T_DASHSCOPE: DASHSCOPE_KEY } }),
    copies: true,
  },
]);
