import { describe, expect, it } from 'vitest';
import { parseRatio, resolveAspect, shortSide, snapRatio, videoSize } from '../src/catalog/geometry.js';

describe('shortSide', () => {
  const cases: ReadonlyArray<[string | undefined, number]> = [
    ['360p', 360],
    ['480p', 480],
    ['540p', 540],
    ['720p', 720],
    ['768p', 768],
    ['1080p', 1080],
    ['2k', 1440],
    ['2K', 1440],
    ['4k', 2160],
    ['4K', 2160],
    [undefined, 720],
    ['', 720],
    ['hd', 720],
    ['p', 720],
    ['720', 720],
    ['8k', 720],
    ['4320p', 2160],
    ['10p', 64],
    ['481p', 482],
  ];
  it.each(cases)('%s -> %i', (resolution, expected) => {
    expect(shortSide(resolution)).toBe(expected);
  });
});

describe('parseRatio', () => {
  const cases: ReadonlyArray<[string, number | null]> = [
    ['16:9', 16 / 9],
    ['9:16', 9 / 16],
    ['1:1', 1],
    ['21:9', 21 / 9],
    ['2.39:1', 2.39],
    ['adaptive', null],
    ['16x9', null],
    ['0:9', null],
    ['16:0', null],
    ['-16:9', null],
    ['', null],
  ];
  it.each(cases)('%s -> %s', (ar, expected) => {
    const got = parseRatio(ar);
    if (expected === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(expected, 10);
  });
});

describe('snapRatio', () => {
  const listed = ['adaptive', '16:9', '9:16', '1:1', '4:3', '3:4'] as const;
  const cases: ReadonlyArray<[number, readonly string[], string]> = [
    [1920 / 1080, listed, '16:9'],
    [1080 / 1920, listed, '9:16'],
    [1, listed, '1:1'],
    [1.4, listed, '4:3'],
    [0.7, listed, '3:4'],
    [5, listed, '16:9'],
    [0.1, listed, '9:16'],
    [2.4, ['16:9', '21:9'], '21:9'],
    [2, [], '16:9'],
    [2, ['adaptive'], '16:9'],
  ];
  it.each(cases)('%f in %j -> %s', (ratio, list, expected) => {
    expect(snapRatio(ratio, list)).toBe(expected);
  });
});

describe('resolveAspect', () => {
  const listed = ['16:9', '9:16', '1:1', '4:3', '3:4'] as const;
  const portrait = { width: 720, height: 1000 };
  const cases: ReadonlyArray<[string, string | undefined, readonly string[], { width: number; height: number } | null, string]> = [
    ['given ratio wins over the image', '1:1', listed, portrait, '1:1'],
    ['given ratio need not be listed', '21:9', listed, null, '21:9'],
    ['adaptive snaps the image', 'adaptive', listed, portrait, '3:4'],
    ['absent with image snaps the image', undefined, listed, portrait, '3:4'],
    ['adaptive with an empty list is 16:9', 'adaptive', [], portrait, '16:9'],
    ['absent with an empty list is 16:9', undefined, [], portrait, '16:9'],
    ['adaptive without image is 16:9', 'adaptive', listed, null, '16:9'],
    ['absent without image is 16:9', undefined, listed, null, '16:9'],
    ['unparseable is 16:9', 'wide', listed, portrait, '16:9'],
  ];
  it.each(cases)('%s', (_name, ar, list, image, expected) => {
    expect(resolveAspect(ar, list, image)).toBe(expected);
  });
});

describe('videoSize', () => {
  const cases: ReadonlyArray<[string | undefined, string, number, number]> = [
    ['720p', '16:9', 1280, 720],
    ['480p', '16:9', 854, 480],
    ['720p', '9:16', 720, 1280],
    ['1080p', '21:9', 2520, 1080],
    ['4k', '16:9', 3840, 2160],
    ['4k', '21:9', 5040, 2160],
    ['2K', '16:9', 2560, 1440],
    ['768p', '4:3', 1024, 768],
    ['360p', '2:3', 360, 540],
    ['540p', '16:9', 960, 540],
    ['720p', '1:1', 720, 720],
    ['1080p', '3:4', 1080, 1440],
    [undefined, '16:9', 1280, 720],
    ['720p', 'garbage', 1280, 720],
  ];
  it.each(cases)('%s at %s -> %ix%i', (resolution, ar, width, height) => {
    expect(videoSize(resolution, ar)).toEqual({ width, height });
  });
});
