/**
 * Files of registry packages a function serves as they are (the API
 * reference's renderer): never bundled into the function's code. In Lambda
 * they are shipped beside the handler (the route row's `assets`, copied by
 * the CDK bundling); locally and in tests they are read from node_modules.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/** The text of an asset: `name` beside the handler in Lambda, else `packagePath` resolved from the project's node_modules. */
export function readAsset(name: string, packagePath: string): string {
  const shipped = process.env.LAMBDA_TASK_ROOT ? join(process.env.LAMBDA_TASK_ROOT, name) : undefined;
  if (shipped && existsSync(shipped)) return readFileSync(shipped, 'utf8');
  return readFileSync(createRequire(join(process.cwd(), 'package.json')).resolve(packagePath), 'utf8');
}
