import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The container steps as docs/operations/install.md gives them: the build script tells a
 * docker client without its daemon from no container tool at all (run with a PATH that holds
 * only what the script needs before it decides, and a fake `docker`), and the `.env` the docs
 * create next to compose.yaml makes every image of the file one that the build script makes, so
 * `docker compose up` (and every later compose command, which reads the same `.env`) needs no
 * registry.
 */

const root = new URL('..', import.meta.url).pathname;
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const scratch = mkdtempSync(join(tmpdir(), 'mediagate-container-docs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A directory for PATH with `dirname` (the script's first line needs it) and the given fakes. */
function pathWith(name: string, fakes: Record<string, string>): string {
  const dir = join(scratch, name);
  spawnSync('mkdir', ['-p', dir]);
  const dirname = spawnSync('bash', ['-c', 'command -v dirname'], { encoding: 'utf8' }).stdout.trim();
  symlinkSync(dirname, join(dir, 'dirname'));
  for (const [tool, body] of Object.entries(fakes)) {
    writeFileSync(join(dir, tool), `#!/bin/sh\n${body}\n`);
    chmodSync(join(dir, tool), 0o755);
  }
  return dir;
}

function buildScript(path: string): { status: number | null; stderr: string } {
  const ran = spawnSync('/bin/bash', [join(root, 'scripts/container/build.sh')], {
    encoding: 'utf8',
    env: { PATH: path, HOME: scratch },
    timeout: 20_000,
  });
  return { status: ran.status, stderr: ran.stderr };
}

describe('scripts/container/build.sh: which container tool', () => {
  it('a docker client whose `docker info` fails: says the daemon is not running, and how to start it', () => {
    const ran = buildScript(pathWith('daemonless', { docker: '[ "$1" = info ] && { echo "Cannot connect to the Docker daemon" >&2; exit 1; }\nexit 0' }));
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain('docker is installed but its daemon is not running: ');
    expect(ran.stderr).toContain('dockerd');
    expect(ran.stderr).not.toContain('none of podman, buildah, docker is installed');
  });

  it('no container tool at all: says none is installed, with the Debian packages', () => {
    const ran = buildScript(pathWith('bare', {}));
    expect(ran.status).toBe(1);
    expect(ran.stderr).toContain('none of podman, buildah, docker is installed');
    expect(ran.stderr).toContain('apt-get install docker.io');
  });
});

describe('install.md: the docker packages and the compose .env', () => {
  const install = read('docs/operations/install.md');

  it('gives the apt-get line for Debian and the daemon command before the first build', () => {
    const build = install.indexOf('scripts/container/build.sh');
    expect(install.indexOf('apt-get install docker.io')).toBeGreaterThan(-1);
    expect(install.indexOf('apt-get install docker.io')).toBeLessThan(build);
    expect(install.indexOf('systemctl start docker')).toBeLessThan(build);
  });

  /** The variables of the `.env` install.md creates (its `cat > .env <<'EOF'` block). */
  function documentedEnv(): Record<string, string> {
    const block = /cat > \.env <<'EOF'\n([\s\S]*?)\nEOF/.exec(install);
    expect(block, "install.md creates .env with cat > .env <<'EOF'").not.toBeNull();
    const lines = (block?.[1] ?? '').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
    return Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
  }

  /** `${NAME:-default}` as compose reads it from `.env`. */
  const interpolate = (text: string, env: Record<string, string>): string =>
    text.replace(/\$\{([A-Z_]+)(?::-([^}]*))?\}/g, (_all, name: string, fallback: string | undefined) => env[name] ?? fallback ?? '');

  const scriptDefault = (variable: string): string => {
    const found = new RegExp(`\\$\\{${variable}:-([^}]+)\\}`).exec(read('scripts/container/build.sh'));
    expect(found, `build.sh's default of ${variable}`).not.toBeNull();
    return found?.[1] ?? '';
  };

  it('with that .env, every image of compose.yaml is one the build script makes (no registry needed)', () => {
    const images = [...interpolate(read('compose.yaml'), documentedEnv()).matchAll(/^\s+image: (\S+)$/gm)].map((match) => match[1]);
    expect(images.length).toBe(3);
    const built = new Set([scriptDefault('IMAGE'), scriptDefault('POSTGRES_IMAGE')]);
    for (const image of images) expect(built, `${image}: made by scripts/container/build.sh`).toContain(image);
    // Without it the file names the official postgres image, which needs a registry.
    expect(interpolate(read('compose.yaml'), {})).toMatch(/image: postgres:/);
  });

  it('the .env stays out of git', () => {
    const ignored = spawnSync('git', ['check-ignore', '-q', '.env'], { cwd: root });
    expect(ignored.status).toBe(0);
  });
});
