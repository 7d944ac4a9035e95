import { App, NestedStack, type CfnResource as CdkResource, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
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

interface TemplateDoc {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
  Outputs?: Record<string, { Value: unknown }>;
  [section: string]: unknown;
}

/** `value` with every `{Ref: p}` of `refs` replaced by refs[p] and every `{Fn::GetAtt: [stack, 'Outputs.o']}` of `outputs` by its value. */
function substitute(value: unknown, refs: Record<string, unknown>, outputs: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((v) => substitute(v, refs, outputs));
  if (value === null || typeof value !== 'object') return value;
  const o = value as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === 'Ref' && typeof o.Ref === 'string' && o.Ref in refs) return refs[o.Ref];
  if (keys.length === 1 && keys[0] === 'Fn::GetAtt' && Array.isArray(o['Fn::GetAtt'])) {
    const [id, attribute] = o['Fn::GetAtt'] as [string, string];
    const key = `${id}.${attribute}`;
    if (key in outputs) return outputs[key];
  }
  return Object.fromEntries(keys.map((k) => [k, substitute(o[k], refs, outputs)]));
}

/**
 * The stack's template with its nested stacks folded in (the alarms and the
 * dashboard live in one: infra/constructs/operations.ts), as if it were one
 * template: a nested resource's parameters are replaced by the parent's values
 * they pass, and the parent's reads of a nested output by that output's value.
 * For the assertions of the infra tests; CloudFormation's per-template limits
 * are checked on the parent (test/infra/canary.test.ts).
 */
export function foldNested(stack: Stack): TemplateDoc {
  const parent = Template.fromStack(stack).toJSON() as TemplateDoc;
  const outputs: Record<string, unknown> = {};
  const resources: TemplateDoc['Resources'] = {};
  for (const child of stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c))) {
    const logicalId = stack.resolve((child.nestedStackResource as CdkResource).logicalId) as string;
    const passed = (parent.Resources[logicalId]?.Properties?.Parameters ?? {}) as Record<string, unknown>;
    const nested = Template.fromStack(child).toJSON() as TemplateDoc;
    Object.assign(resources, substitute(nested.Resources, passed, {}) as TemplateDoc['Resources']);
    for (const [name, output] of Object.entries(nested.Outputs ?? {})) outputs[`${logicalId}.Outputs.${name}`] = substitute(output.Value, passed, {});
  }
  return { ...parent, Resources: { ...(substitute(parent.Resources, {}, outputs) as TemplateDoc['Resources']), ...resources } };
}

/** foldNested as an assertions Template. */
export const foldedTemplate = (stack: Stack): Template => Template.fromJSON(foldNested(stack));
