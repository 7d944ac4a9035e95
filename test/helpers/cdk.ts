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
 * dashboard live in one, the API's route functions in others:
 * docs/architecture.md "Stack layout"), as if it were one template: a nested
 * resource's parameters are replaced by the values the parent passes, and a
 * read of a nested output (by the parent, or by another nested stack through
 * a parameter) by that output's value. For the assertions of the infra tests;
 * CloudFormation's per-template limits are checked on each template
 * (test/infra/canary.test.ts, templateSizes). Two templates with one logical
 * id would hide a resource, so that throws.
 */
export function foldNested(stack: Stack): TemplateDoc {
  const parent = Template.fromStack(stack).toJSON() as TemplateDoc;
  const nested = stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c)).map((child) => {
    const logicalId = stack.resolve((child.nestedStackResource as CdkResource).logicalId) as string;
    return { logicalId, passed: (parent.Resources[logicalId]?.Properties?.Parameters ?? {}) as Record<string, unknown>, template: Template.fromStack(child).toJSON() as TemplateDoc };
  });
  // Outputs in terms of the parent's resources: a parameter may pass another nested stack's output, so resolve until nothing changes.
  let outputs: Record<string, unknown> = {};
  for (let round = 0, changed = true; changed; round++) {
    if (round > 10) throw new Error('foldNested: nested outputs do not resolve (a cycle?)');
    const next: Record<string, unknown> = {};
    for (const { logicalId, passed, template } of nested) {
      const params = substitute(passed, {}, outputs) as Record<string, unknown>;
      for (const [name, output] of Object.entries(template.Outputs ?? {})) next[`${logicalId}.Outputs.${name}`] = substitute(output.Value, params, outputs);
    }
    changed = JSON.stringify(next) !== JSON.stringify(outputs);
    outputs = next;
  }
  const resources = substitute(parent.Resources, {}, outputs) as TemplateDoc['Resources'];
  for (const { passed, template } of nested) {
    const params = substitute(passed, {}, outputs) as Record<string, unknown>;
    for (const [id, resource] of Object.entries(substitute(template.Resources, params, outputs) as TemplateDoc['Resources'])) {
      if (id in resources) throw new Error(`foldNested: logical id ${id} in two templates`);
      resources[id] = resource;
    }
  }
  return { ...parent, Resources: resources };
}

/** What CloudFormation limits per template (500 resources, 200 parameters, 200 outputs), counted. */
export interface TemplateSize {
  resources: number;
  parameters: number;
  outputs: number;
}

/** Each template of the stack (the parent and every nested stack, by construct path) and its size. */
export function templateSizes(stack: Stack): Record<string, TemplateSize> {
  const size = (s: Stack): TemplateSize => {
    const t = Template.fromStack(s).toJSON() as TemplateDoc & { Parameters?: object };
    return { resources: Object.keys(t.Resources).length, parameters: Object.keys(t.Parameters ?? {}).length, outputs: Object.keys(t.Outputs ?? {}).length };
  };
  const sizes: Record<string, TemplateSize> = { [stack.node.path]: size(stack) };
  for (const child of stack.node.findAll().filter((c): c is NestedStack => NestedStack.isNestedStack(c))) sizes[child.node.path] = size(child);
  return sizes;
}

/** foldNested as an assertions Template. */
export const foldedTemplate = (stack: Stack): Template => Template.fromJSON(foldNested(stack));
