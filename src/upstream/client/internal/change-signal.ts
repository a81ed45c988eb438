/** A level-free wake-up: `changed()` resolves at the next `notify()` (readers and the emitter wait on it). */
export interface ChangeSignal {
  notify(): void;
  changed(): Promise<void>;
}

export function createChangeSignal(): ChangeSignal {
  let waiters: (() => void)[] = [];
  return {
    notify() {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    },
    changed: () => new Promise((r) => waiters.push(r)),
  };
}
