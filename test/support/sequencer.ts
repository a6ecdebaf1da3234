import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest's order with the files named in `first` moved to the front of their group, in the order given.
 *
 * Vitest orders a group's files by their last durations when its results cache has them and by size when it
 * doesn't (a clean clone, CI): the longest files of the suite are not its largest, so a clean run started
 * `npm-start.test.ts` (a minute and more) halfway through and ended on one worker while the other waited. With
 * the longest files first, the short ones fill in behind them and both workers end together.
 */
export function longestFirst(first: readonly string[]) {
  return class LongestFirst extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const sorted = await super.sort(files);
      const rank = (spec: TestSpecification) => {
        const index = first.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
        return index === -1 ? first.length : index;
      };
      const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
      // Stable: files not named keep vitest's order among themselves.
      return sorted
        .map((spec, index) => ({ spec, index }))
        .sort((a, b) => group(a.spec) - group(b.spec) || rank(a.spec) - rank(b.spec) || a.index - b.index)
        .map(({ spec }) => spec);
    }
  };
}
