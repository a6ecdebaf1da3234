/**
 * The local settlement runner: runs the settlement workflow definition in-process. Filled in by the trade
 * settlement work; until then there is nothing to run.
 */
export async function startLocalWorkflows(): Promise<() => Promise<void>> {
  return async () => undefined;
}
