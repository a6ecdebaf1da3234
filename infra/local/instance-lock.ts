import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

/** Whether a process with this id is alive (EPERM: alive, but someone else's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface DataDirLock {
  release(): void;
}

/**
 * One `npm start` per data directory: two DynamoDB Locals on one database file would corrupt each other's
 * view, and a second instance must not touch the first's state. The lock is a file created exclusively
 * (`wx`) holding the owner's pid; a lock whose owner is dead (a crash, a SIGKILL) is taken over.
 */
export function lockDataDir(dir: string): DataDirLock {
  const file = resolve(dir, 'instance.lock');
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          // Only our own lock: never another instance's.
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST')
          throw new Error(`another instance took ${dir} while this one started; stop it first or set DATA_DIR`);
        throw error;
      }
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && alive(owner)) {
        throw new Error(
          `another npm start (pid ${owner}) is running on the data directory ${dir}; stop it first or set DATA_DIR to another directory`,
        );
      }
      rmSync(file, { force: true });
    }
  }
}

/** Fails fast and plainly when the HTTP port is taken, before anything else starts. */
export function assertPortFree(port: number, host: string): Promise<void> {
  return new Promise((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(`port ${port} on ${host} is already in use; stop what holds it or set PORT to a free port`)
          : error,
      );
    });
    probe.listen(port, host, () => probe.close(() => resolvePort()));
  });
}
