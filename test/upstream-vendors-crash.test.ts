// One paid job per task across a crash, for the six protocols of 2026 (docs/guides/channels.md#what-an-operator-can-rely-on):
// the kill points of upstream-crash.test.ts (which runs them against DashScope, with an output
// copy in progress) against the fakes of Gemini, Vertex AI, Kling, Runway, Luma and xAI, through
// one child process per phase (helpers/upstream-crash.ts). A submission whose answer was lost is
// found again by Kling (our task id is its `external_task_id`) and completes; the other five
// cannot tell, so it fails `upstream_submission_unknown`, never submitted a second time.
import { generateKeyPairSync } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startGeminiFake } from './fakes/gemini.js';
import { startKlingFake } from './fakes/kling.js';
import { startLumaFake } from './fakes/luma.js';
import { startRunwayFake } from './fakes/runway.js';
import { startVertexFake } from './fakes/vertex.js';
import { startXaiFake } from './fakes/xai.js';
import type { KitOptions } from './fakes/upstream-kit.js';
import { defaultKind, upstreamCrashSuite, type CrashFake, type CrashTarget } from './helpers/upstream-crash.js';

/** Slow enough that each task is still running when the second child is killed. */
const PACE = { queuedMs: 300, runMs: 3_000 };
const KLING = { accessKey: 'kling-crash-access', secretKey: 'kling-crash-secret' };
const VERTEX = { project: 'mediagate-crash', location: 'us-central1', clientEmail: 'veo@mediagate-crash.iam.gserviceaccount.com' };
const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });

/** A protocol whose channel takes one API key, and which cannot find a lost submission. */
function keyed(protocol: string, upstreamModel: string, duration: number, start: (options: KitOptions) => Promise<CrashFake>, copies = true): CrashTarget {
  const key = `${protocol}-crash-key`;
  const variable = `T_${protocol.toUpperCase()}`;
  return {
    protocol,
    upstreamModel,
    body: { duration },
    lost: 'upstream_submission_unknown',
    startFake: () => start({ apiKey: key, ...PACE }),
    channel: () => Promise.resolve({ fields: { api_key_env: variable }, env: { [variable]: key } }),
    copies,
  };
}

const TARGETS: readonly CrashTarget[] = [
  keyed('gemini', 'veo-3.1-generate-preview', 8, startGeminiFake, false),
  {
    protocol: 'vertex',
    upstreamModel: 'veo-3.1-generate-001',
    body: { duration: 8 },
    lost: 'upstream_submission_unknown',
    startFake: () => startVertexFake({ ...VERTEX, publicKey: pair.publicKey, ...PACE }),
    async channel(fake, dir) {
      // The grant goes to the key file's token_uri, straight to the fake: only API calls are kill points.
      const keyFile = join(dir, 'service-account.json');
      const tokenUri = `${fake.origin}/token`;
      await writeFile(
        keyFile,
        JSON.stringify({
          type: 'service_account',
          project_id: VERTEX.project,
          private_key_id: 'crash',
          private_key: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
          client_email: VERTEX.clientEmail,
          token_uri: tokenUri,
        }),
      );
      return { fields: { project: VERTEX.project, location: VERTEX.location, credentials_file_env: 'T_VERTEX_KEY' }, env: { T_VERTEX_KEY: keyFile } };
    },
    // Vertex polls with a POST (`:fetchPredictOperation`).
    kind: (method, path) => (path.includes(':fetchPredictOperation') ? 'poll' : defaultKind(method, path)),
  },
  {
    protocol: 'kling',
    upstreamModel: 'kling-v3',
    body: { duration: 5 },
    lost: 'completed',
    startFake: () => startKlingFake({ ...KLING, ...PACE }),
    copies: true,
    channel: () =>
      Promise.resolve({
        fields: { access_key_env: 'T_KLING_AK', secret_key_env: 'T_KLING_SK' },
        env: { T_KLING_AK: KLING.accessKey, T_KLING_SK: KLING.secretKey },
      }),
  },
  keyed('runway', 'veo3.1', 8, startRunwayFake),
  keyed('luma', 'ray-2', 5, startLumaFake),
  keyed('xai', 'grok-imagine-video', 5, startXaiFake),
];

upstreamCrashSuite('the six protocols of 2026', TARGETS);
