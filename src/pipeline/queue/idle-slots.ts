/**
 * The worker's idle slots, as the run's end shows them (issue 32): slots no slice has filled for a while. While
 * slices wait in the queue, BullMQ fills a freed slot within milliseconds; a slot free at every sample of a window
 * (4 x 250 ms) says the queue is empty, so the work left is in the slices running, and a long one among them splits
 * to fill the idle slots (`tailSplitRule`, slice-split-rule.ts).
 */

export interface IdleSlotsOptions {
  /** How often the free slots are sampled, ms. @default 250 */
  intervalMs?: number;
  /** Samples in the window: a slot counts as idle only when free at every one of them. @default 4 */
  samples?: number;
}

export interface IdleSlots {
  /**
   * Claims, for one split, its share of the idle slots (idle over the window, divided among the slices running, rounded
   * down, and at least one while any is idle): the slots a split may fill without queueing its pieces behind the
   * others'. A claim counts as filled until the samples show it (the window's samples are lowered by it), so slices
   * that split one after another do not all take the same slots.
   */
  claim(): number;
  stop(): void;
}

/**
 * The pure part: the share of `idle` slots (the least free over a full window) among `running` slices; at least 1
 * while any slot is idle (17 slices running, 15 slots idle: each may split in two, the first 15 to ask; with a share
 * rounded down to 0, none did and the idle slots stayed idle: the partition plan's last 80 s at scale medium).
 */
export function idleShare(window: readonly number[], samples: number, running: number): number {
  if (window.length < samples || running < 1) return 0;
  const idle = Math.min(...window);
  return idle < 1 ? 0 : Math.max(1, Math.floor(idle / running));
}

/** Samples `load()` (the worker's concurrency and its slices running) every `intervalMs`. */
export function startIdleSlots(
  load: () => { concurrency: number; running: number },
  options: IdleSlotsOptions = {},
): IdleSlots {
  const intervalMs = options.intervalMs ?? 250;
  const samples = options.samples ?? 4;
  const window: number[] = [];
  const timer = setInterval(() => {
    const { concurrency, running } = load();
    window.push(Math.max(0, concurrency - running));
    if (window.length > samples) window.shift();
  }, intervalMs);
  timer.unref();
  return {
    claim: () => {
      const share = idleShare(window, samples, load().running);
      for (let i = 0; i < window.length; i++) window[i] = Math.max(0, window[i]! - share);
      return share;
    },
    stop: () => clearInterval(timer),
  };
}
