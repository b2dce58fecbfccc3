import { secondsField } from '../../config-fields.js';

/** The files module's settings (modules/files.ts). */
export const FILES_SLICE = {
  signingRefreshMs: secondsField(
    'MEDIAGATE_SIGNING_REFRESH_S',
    'how often a running process re-reads the URL signing secrets (`mediagate secrets rotate`)',
    10,
    1,
    3600,
  ),
} as const;
