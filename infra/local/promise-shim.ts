/**
 * aws-local-stepfunctions v3 calls `Promise.withResolvers` (ES2024), which Node 20 lacks. Import this module
 * once, before the local runner executes a state machine. It touches nothing where the method already exists,
 * so Node 22 and the Lambda runtime behave exactly as without it.
 */
type Resolvers<T> = {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
};

const promiseConstructor = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };

if (typeof promiseConstructor.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    enumerable: false,
    value: function withResolvers<T>(this: PromiseConstructor): Resolvers<T> {
      let resolve!: Resolvers<T>['resolve'];
      let reject!: Resolvers<T>['reject'];
      // `this` keeps subclass semantics (`MyPromise.withResolvers()`), as the standard method does.
      const promise = new this<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
