/**
 * App: the composition root. The runtime that wires the real parts together (client, planner, queue, publish).
 */
export {
  createClientSliceSource,
  createClientPlannerSource,
  createPipelineRuntime,
  PIPELINE_CLIENT_DEFAULTS,
} from './pipeline-runtime.js';
export type { PipelineRuntime, PipelineRuntimeOptions } from './pipeline-runtime.js';
export { runDlqReplay } from './dlq-replay.js';
export type { DlqReplayRequest } from './dlq-replay.js';
