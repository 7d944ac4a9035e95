/**
 * A sync iterable read as an async one (a stream's chunks, an S3 body), as
 * `for await` reads a sync iterable: each step settles one `next()`, what the
 * generator throws is a rejection, and an early `break` runs its `finally`.
 */
export function asyncIterable<T>(source: Iterable<T>): AsyncIterableIterator<T> {
  const iterator = source[Symbol.iterator]();
  const settle = (step: () => IteratorResult<T>) => new Promise<IteratorResult<T>>((resolve) => resolve(step()));
  return {
    next: () => settle(() => iterator.next()),
    return: (value?: T) => settle(() => iterator.return?.(value) ?? { done: true, value }),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
