import { Duration } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { resolve } from 'node:path';
import type { Access } from '../../shared/http/route.js';
import { bundling } from './bundling.js';

export const projectRoot = resolve(import.meta.dirname, '../..');

export interface ServiceResources {
  table: ITableV2;
  imports: IBucket;
  events: IBucket;
  environment: Record<string, string>;
}

export interface ServiceFunctionProps {
  /** Handler entry relative to the project root. */
  entry: string;
  access: Access;
  resources: ServiceResources;
  timeoutSeconds?: number;
  memoryMb?: number;
  environment?: Record<string, string>;
}

/**
 * A NodejsFunction with the project's defaults (Node.js 22, arm64, minified
 * esbuild bundle, X-Ray tracing, a log group with retention) and exactly the
 * grants its route or job row declares.
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const { resources, access } = props;
    super(scope, id, {
      entry: resolve(projectRoot, props.entry),
      handler: 'handler',
      projectRoot,
      depsLockFilePath: resolve(projectRoot, 'package-lock.json'),
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memoryMb ?? 512,
      timeout: Duration.seconds(props.timeoutSeconds ?? 29),
      tracing: lambda.Tracing.ACTIVE,
      logGroup: new logs.LogGroup(scope, `${id}Logs`, { retention: logs.RetentionDays.ONE_MONTH }),
      environment: { ...resources.environment, ...props.environment },
      bundling,
    });
    if (access.table === 'R') resources.table.grantReadData(this);
    if (access.table === 'RW') resources.table.grantReadWriteData(this);
    for (const [name, bucket] of [['imports', resources.imports], ['events', resources.events]] as const) {
      if (access[name] === 'R') bucket.grantRead(this);
      if (access[name] === 'RW') bucket.grantReadWrite(this);
    }
    if (access.mail) {
      this.addToRolePolicy(new iam.PolicyStatement({ actions: ['ses:SendEmail', 'ses:SendRawEmail'], resources: ['*'] }));
    }
  }
}
