import type { Command } from 'commander';
import { action, integerArg } from './context.js';
import { addCreateOptions, commonParams, createCommand, createTask, type CreateFlags } from './create.js';
import { mediaValue } from './media.js';

interface VideoFlags extends CreateFlags {
  readonly negativePrompt?: string;
  readonly image?: string;
  readonly endImage?: string;
  readonly images?: readonly string[];
  readonly videos?: readonly string[];
  readonly audios?: readonly string[];
  readonly audio?: string;
  readonly duration?: number;
  readonly resolution?: string;
  readonly aspectRatio?: string;
  readonly audioEnable?: boolean;
}

async function videoParams(flags: VideoFlags): Promise<Record<string, unknown>> {
  const params = commonParams(flags);
  const media = async (value: string | undefined, flag: string): Promise<string | undefined> => (value === undefined ? undefined : mediaValue(value, flag));
  const list = async (values: readonly string[] | undefined, flag: string): Promise<string[] | undefined> =>
    values === undefined ? undefined : Promise.all(values.map((value) => mediaValue(value, flag)));
  const entries: [string, unknown][] = [
    ['negative_prompt', flags.negativePrompt],
    ['image', await media(flags.image, '--image')],
    ['end_image', await media(flags.endImage, '--end-image')],
    ['images', await list(flags.images, '--images')],
    ['videos', await list(flags.videos, '--videos')],
    ['audios', await list(flags.audios, '--audios')],
    ['audio', await media(flags.audio, '--audio')],
    ['duration', flags.duration],
    ['resolution', flags.resolution],
    ['aspect_ratio', flags.aspectRatio],
    ['audio_enable', flags.audioEnable],
  ];
  for (const [key, value] of entries) if (value !== undefined) params[key] = value;
  return params;
}

/** `mediagate video create ...` */
export function registerVideoCommands(program: Command): void {
  const group = program.command('video').description('create video generation tasks (see also `mediagate task`)');
  const create = createCommand(group, 'create a video task; local files become data URLs').usage('--model ID --prompt TEXT [options]');
  addCreateOptions(create, (command) =>
    command
      .option('--image <file|url>', 'first-frame or input image')
      .option('--end-image <file|url>', 'end-frame image')
      .option('--images <file|url...>', 'reference images')
      .option('--videos <file|url...>', 'reference videos')
      .option('--audios <file|url...>', 'reference audio clips')
      .option('--audio <file|url>', 'input audio')
      .option('--negative-prompt <text>', 'content to avoid')
      .option('--duration <seconds>', 'video length', integerArg)
      .option('--resolution <r>', 'e.g. 480p, 720p, 1080p (per model)')
      .option('--aspect-ratio <a>', 'e.g. 16:9, 9:16, adaptive (per model)')
      .option('--audio-enable', 'generate audio with the video')
      .option('--no-audio-enable', 'no audio track'),
  ).action(
    action(async (flags: VideoFlags) => {
      await createTask('video', flags, await videoParams(flags));
    }),
  );
}
