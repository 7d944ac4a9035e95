import { App } from 'aws-cdk-lib';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** cdk.json's context (the feature flags), as `cdk synth` applies it. */
export const cdkContext = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;

/** An App with cdk.json's flags that skips esbuild bundling (`npx cdk synth` bundles for real). */
export function testApp(): App {
  return new App({ context: { ...cdkContext, 'aws:cdk:bundling-stacks': [] } });
}

/**
 * What the infra tests read of a synthesized resource (`Template.findResources`
 * answers `any`): the properties they look at by name, the rest unknown. A
 * view over every resource type they read, so a property is there only on
 * the types that have it.
 */
export interface CfnResource {
  Properties: {
    Role: { 'Fn::GetAtt': [string, string] };
    Roles: Array<{ Ref: string }>;
    PolicyDocument: { Statement: Array<{ Action: string | string[]; Resource: unknown; Effect?: string }> };
    Environment: { Variables: Record<string, unknown> };
    FunctionName: { Ref: string };
    BucketName: { Ref: string };
    NotificationConfiguration: { LambdaFunctionConfigurations: unknown[] };
    AccessLogSettings: { Format: string };
    RouteSettings: Record<string, unknown>;
    Targets: Array<{ DeadLetterConfig?: unknown }>;
    DestinationConfig?: { OnFailure?: unknown };
    VersioningConfiguration?: { Status?: string };
    Replicas: Array<{ DeletionProtectionEnabled?: boolean }>;
    [property: string]: unknown;
  };
  DeletionPolicy?: string;
  Condition?: string;
}
