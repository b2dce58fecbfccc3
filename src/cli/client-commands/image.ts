import type { Command } from 'commander';
import { action, integerArg } from './context.js';
import { addCreateOptions, commonParams, createCommand, createTask, type CreateFlags } from './create.js';

interface ImageFlags extends CreateFlags {
  readonly size?: string;
  readonly width?: number;
  readonly height?: number;
}

/** `mediagate image create ...` */
export function registerImageCommands(program: Command): void {
  const group = program.command('image').description('create image generation tasks (see also `mediagate task`)');
  const create = createCommand(group, 'create an image task').usage('--model ID --prompt TEXT [options]');
  addCreateOptions(create, (command) =>
    command
      .option('--size <WxH>', 'e.g. 1280x720 (not with --width/--height)')
      .option('--width <px>', 'width in pixels', integerArg)
      .option('--height <px>', 'height in pixels', integerArg),
  ).action(
    action(async (flags: ImageFlags) => {
      const params = commonParams(flags);
      if (flags.size !== undefined) params['size'] = flags.size;
      if (flags.width !== undefined) params['width'] = flags.width;
      if (flags.height !== undefined) params['height'] = flags.height;
      await createTask('image', flags, params);
    }),
  );
}
