/**
 * `mediagate storage check`: the media store the configuration names (MEDIAGATE_STORAGE,
 * MEDIAGATE_S3_*) is opened as at start, a configuration fault exiting 78 naming the variable;
 * then a probe object is written, read back, listed and deleted. Any failure exits 1.
 */
import { ConfigError } from '../config.js';
import { fail, readConfig } from './serve.js';

export async function storageCheck(): Promise<number> {
  const config = readConfig({ workers: false });
  const { probeMediaStore } = await import('../service-factory.js');
  const out = (text: string): void => void process.stdout.write(`${text}\n`);
  try {
    const result = await probeMediaStore(config);
    out(`${result.kind} media store at ${result.where}: ok`);
    for (const step of result.steps) out(`  ${step.step.padEnd(7)} ${step.ms} ms`);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) fail(error);
    process.stderr.write(`mediagate: the media store check failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
