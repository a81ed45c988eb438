/** Append-only typed columns: the big tables stay compact (a few bytes per row) and can still grow in live mode. */

type TypedArray = Float64Array | Int32Array | Uint32Array | Uint8Array | Uint16Array;
type TypedArrayCtor<T extends TypedArray> = new (length: number) => T;

export interface Column<T extends TypedArray = TypedArray> {
  readonly length: number;
  get(i: number): number;
  set(i: number, value: number): void;
  push(value: number): void;
  /** The live view of the filled part (valid until the next push). */
  view(): T;
}

export function createColumn<T extends TypedArray>(
  ctor: TypedArrayCtor<T>,
  initial: T | number = 16,
): Column<T> {
  let data: T = typeof initial === 'number' ? new ctor(Math.max(16, initial)) : initial;
  let length = typeof initial === 'number' ? 0 : initial.length;
  return {
    get length() {
      return length;
    },
    get: (i) => data[i] as number,
    set: (i, value) => {
      data[i] = value;
    },
    push(value) {
      if (length === data.length) {
        const bigger = new ctor(Math.max(16, data.length * 2));
        (bigger as unknown as { set(a: ArrayLike<number>): void }).set(data);
        data = bigger;
      }
      data[length++] = value;
    },
    view: () => data.subarray(0, length) as T,
  };
}
