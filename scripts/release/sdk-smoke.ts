/**
 * The release smoke of `@mediagate/client`: `.ci/release-smoke` installs the package from the
 * tarball `npm pack` made, compiles this file with tsc against the declarations it ships
 * (strict, library checks on), and runs it against a running mediagate (MEDIAGATE_BASE_URL,
 * MEDIAGATE_API_KEY). In the repository it also compiles against the workspace package, so a
 * change of the SDK's types that breaks it fails `npm run typecheck` first.
 */
import { Mediagate, ValidationError, WebhookVerificationError, unwrapWebhook, type ImageTask, type VideoTask } from '@mediagate/client';

function check(condition: boolean, what: string): asserts condition {
  if (!condition) throw new Error(`sdk smoke: ${what}`);
}

const client = new Mediagate();

// The types are the package's own: a parameter the model does not take does not compile.
// @ts-expect-error `size` is a parameter of the image models, not of a video model.
const notCompiled = (): unknown => client.videos.create({ model: 'vendora/famw-2.7-t2v', prompt: 'x', size: '1280x720' });
void notCompiled;

const models = await client.models.list();
check(
  models.some((model) => model.id === 'vendora/famw-2.7-t2v'),
  'the model list names vendora/famw-2.7-t2v',
);

const video: VideoTask = await client.videos.createAndWait(
  { model: 'vendora/famw-2.7-t2v', prompt: 'release smoke: a red fox running through snow', duration: 2, resolution: '480p' },
  { signal: AbortSignal.timeout(120_000) },
);
check(video.status === 'completed', `the video completed (got ${video.status})`);
const url = video.outputs[0]?.url;
check(url !== undefined, 'the video has an output URL');
const file = await fetch(url);
const bytes = new Uint8Array(await file.arrayBuffer());
check(
  file.ok && file.headers.get('content-type') === 'video/mp4',
  `the output downloads as video/mp4 (got ${file.status} ${file.headers.get('content-type')})`,
);
check(new TextDecoder().decode(bytes.subarray(4, 8)) === 'ftyp', 'the output is an MP4 file');

const image: ImageTask = await client.images.createAndWait(
  { model: 'vendora/famz-image-spicy-pro', prompt: 'release smoke: a lighthouse at dusk', size: '1280x720' },
  { signal: AbortSignal.timeout(120_000) },
);
check(image.status === 'SUCCESS', `the image succeeded (got ${image.status})`);

let refused: unknown;
try {
  await client.videos.create({ model: 'vendora/famw-2.7-t2v', prompt: 'too long', duration: 99 });
} catch (error) {
  refused = error;
}
check(refused instanceof ValidationError && refused.param === 'duration', 'a duration out of range is a ValidationError on `duration`');

let unsigned: unknown;
try {
  unwrapWebhook('{}', {}, `whsec_${Buffer.alloc(32).toString('base64')}`);
} catch (error) {
  unsigned = error;
}
check(unsigned instanceof WebhookVerificationError, 'an unsigned webhook is refused');

console.log(`sdk smoke: ok: ${models.length} models; video ${video.id} (${bytes.length} bytes); image ${image.task_id}; validation and webhook checks`);
