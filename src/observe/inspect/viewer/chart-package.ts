import { MissingDependencyError } from '../../../errors/missing-dependency-error.js';
import { loadElk } from '../../chart/layout-chart.js';

/**
 * What the viewer says when the package its statechart is laid out with cannot be loaded: in the
 * page, where the chart would be, and on `actorloop view`'s stderr at start — what to install,
 * why, and that nothing else needs it.
 *
 * @example
 * ```ts
 * missingChartPackageHint('elkjs'); // 'the statechart is laid out by the optional package elkjs, which is not installed: …'
 * ```
 */
export function missingChartPackageHint(packageName: string): string {
  return (
    `the statechart is laid out by the optional package ${packageName}, which is not installed: ` +
    `install it beside actorloop (npm install ${packageName}), then reload the page; ` +
    'conversations, steps, approvals and forks work without it'
  );
}

/**
 * The package the viewer's statechart needs when it cannot be loaded (`elkjs`, an optional peer),
 * else `undefined` — loading it, as drawing the chart does (a failure is not kept: an install
 * afterwards is found).
 *
 * @example
 * ```ts
 * const missing = await missingChartPackage();
 * if (missing) console.error(missingChartPackageHint(missing));
 * ```
 */
export async function missingChartPackage(): Promise<string | undefined> {
  try {
    await loadElk();
    return undefined;
  } catch (error) {
    if (MissingDependencyError.isInstance(error)) return error.packageName;
    throw error;
  }
}
