import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { renderStoreChart, withStoreChart } from '../../lib/store/entity/chart.js';
import { entityCharts } from '../../lib/store/entities/index.js';

const README = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'lib', 'store', 'README.md');

describe('the store chart (lib/store/README.md)', () => {
  const charts = entityCharts();

  it('is the one the entity definitions render (npm run store:chart rewrites it)', () => {
    const document = readFileSync(README, 'utf8');
    expect(withStoreChart(document, renderStoreChart(charts))).toBe(document);
  });

  it('gives no two entities the same key: an item is one entity', () => {
    const keysOf = charts.map((chart) => `${chart.table} ${chart.pk} ${chart.sk ?? ''}`);
    expect(new Set(keysOf).size).toBe(keysOf.length);
  });
});
