import type { Route } from '../http/route.js';
import { registerMultipart } from './form.js';
import { generateImage } from './images.js';
import {
  FRONT_DOOR_SCHEMAS,
  createVideoOperation,
  deleteVideoOperation,
  generateImageOperation,
  getVideoOperation,
  listVideosOperation,
  videoContentOperation,
} from './openapi.js';
import { createVideo, deleteVideo, getVideo, getVideoContent, listVideos } from './videos.js';

/** MEDIAGATE_SYNC_WAIT_S's default, for a server built without it (specs of other rooms). */
const DEFAULT_SYNC_WAIT_MS = 600_000;

/**
 * The OpenAI-compatible front doors (docs/guides/openai-clients.md): rows of the route table
 * (http/routes.ts spreads them in). Errors in the video family's envelope, which is OpenAI's
 * shape `{error: {message, type, param, code}}`.
 */
export const FRONT_DOOR_ROUTES: readonly Route[] = [
  {
    path: '/v1/videos',
    methods: ['POST'],
    family: 'video',
    auth: true,
    handler: createVideo,
    parsers: registerMultipart,
    operation: createVideoOperation,
    components: FRONT_DOOR_SCHEMAS,
  },
  { path: '/v1/videos', methods: ['GET'], family: 'video', auth: true, handler: listVideos, operation: listVideosOperation },
  { path: '/v1/videos/:video_id', methods: ['GET'], family: 'video', auth: true, handler: getVideo, operation: getVideoOperation },
  { path: '/v1/videos/:video_id', methods: ['DELETE'], family: 'video', auth: true, handler: deleteVideo, operation: deleteVideoOperation },
  { path: '/v1/videos/:video_id/content', methods: ['GET'], family: 'video', auth: true, handler: getVideoContent, operation: videoContentOperation },
  {
    path: '/v1/images/generations',
    methods: ['POST'],
    family: 'video',
    auth: true,
    handler: (deps) => generateImage(deps, deps.ctx.syncWaitMs ?? DEFAULT_SYNC_WAIT_MS),
    operation: generateImageOperation,
  },
];
