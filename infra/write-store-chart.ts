import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { renderStoreChart, withStoreChart } from '../lib/store/entity/chart.js';
import { entityCharts } from '../lib/store/entities/index.js';
import { PROJECT_ROOT } from './service-function.js';

/**
 * `npm run store:chart [-- --check]`: writes the store chart (every entity's keys and indexes, from its
 * definition) into lib/store/README.md; with --check, exits 1 when the file's chart is out of date instead.
 */
const { values } = parseArgs({ args: process.argv.slice(2), strict: true, options: { check: { type: 'boolean' } } });
const path = join(PROJECT_ROOT, 'lib', 'store', 'README.md');
const current = readFileSync(path, 'utf8');
const next = withStoreChart(current, renderStoreChart(entityCharts()));
if (values.check) {
  if (next !== current) {
    console.error('lib/store/README.md: the store chart is out of date; run npm run store:chart');
    process.exit(1);
  }
} else if (next !== current) writeFileSync(path, next);
