/**
 * Local equals deployed: compares what the handlers did under the local
 * runtime (infra/local/recording.ts: each SDK call as the IAM action and
 * resource it needs, each environment variable read) with the synthesized
 * template: the function's role allows each call on that resource, and its
 * `Environment` sets each required variable it read (or Lambda sets it). And
 * the job table's triggers against the template's schedules, event source
 * mappings, bucket notifications, failure destinations and retries, and its
 * `successTo` against the functions' success destinations. Every check names
 * the function and what is missing; an empty list is a pass.
 */
import { ServiceStack } from '../../infra/service-stack.js';
import type { Recording } from '../../infra/local/recording.js';
import { jobList, type JobDef } from '../../shared/jobs.js';
import { foldNested, testApp } from './cdk.js';

type Json = unknown;
export interface TemplateJson {
  Resources: Record<string, { Type: string; Properties?: Record<string, Json> }>;
}

/**
 * The service's template as `cdk synth` makes it (without bundling), as plain
 * JSON; `folded`: with its nested stacks (route functions, alarms) folded in (foldNested), as the infra tests read it.
 */
export function synthesizedTemplate({ folded = false }: { folded?: boolean } = {}): TemplateJson {
  const app = testApp();
  const stack = new ServiceStack(app, 'Deployed', { mailFrom: 'news@example.com' });
  if (folded) return foldNested(stack);
  return app.synth().getStackByName(stack.stackName).template as TemplateJson;
}

/** Variables Lambda sets in every function's environment. */
export const LAMBDA_SETS = new Set([
  'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_LAMBDA_FUNCTION_NAME', 'AWS_LAMBDA_FUNCTION_VERSION', 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_LOG_GROUP_NAME', 'AWS_LAMBDA_LOG_STREAM_NAME', 'AWS_LAMBDA_INITIALIZATION_TYPE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN', 'AWS_EXECUTION_ENV', 'AWS_XRAY_CONTEXT_MISSING', 'AWS_XRAY_DAEMON_ADDRESS', '_X_AMZN_TRACE_ID', '_HANDLER',
  'LAMBDA_TASK_ROOT', 'LAMBDA_RUNTIME_DIR', 'TZ', 'LANG', 'PATH', 'LD_LIBRARY_PATH', 'NODE_PATH',
]);

/** A template value as text: `{Ref: X}` is `<X>`, `{Fn::GetAtt: [X, Arn]}` is `<X.Arn>`, joins are joined. */
export function render(value: Json): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const v = value as Record<string, Json>;
    if ('Ref' in v) return `<${String(v.Ref)}>`;
    if ('Fn::GetAtt' in v) return `<${(v['Fn::GetAtt'] as string[]).join('.')}>`;
    if ('Fn::Join' in v) {
      const [sep, parts] = v['Fn::Join'] as [string, Json[]];
      return parts.map(render).join(sep);
    }
  }
  return '<?>';
}

const glob = (pattern: string, text: string) =>
  new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i').test(text);

interface FunctionView {
  logicalId: string;
  environment: Record<string, Json>;
  statements: Array<{ actions: string[]; resources: string[] }>;
}

/** The function whose logical id is the route or job id and a hash, with its environment and role statements. */
export function functionView(template: TemplateJson, id: string): FunctionView | undefined {
  const entry = Object.entries(template.Resources).find(([logicalId, r]) => r.Type === 'AWS::Lambda::Function' && new RegExp(`^${id}[0-9A-F]{8}$`).test(logicalId));
  if (!entry) return undefined;
  const [logicalId, fn] = entry;
  const role = ((fn.Properties?.Role as Record<string, string[]>)['Fn::GetAtt'] ?? [])[0];
  const statements = Object.values(template.Resources)
    .filter((r) => r.Type === 'AWS::IAM::Policy' && (r.Properties?.Roles as Array<{ Ref?: string }>).some((ref) => ref.Ref === role))
    .flatMap((p) => (p.Properties?.PolicyDocument as { Statement: Array<{ Effect: string; Action: string | string[]; Resource: Json }> }).Statement)
    .filter((s) => s.Effect === 'Allow')
    .map((s) => ({ actions: [s.Action].flat(), resources: [s.Resource].flat().map(render) }));
  const environment = ((fn.Properties?.Environment as { Variables?: Record<string, Json> } | undefined)?.Variables ?? {});
  return { logicalId, environment, statements };
}

/** The ARN (as template text) of what a recorded call touched, through the variable of the function's environment that names it. */
function arnOf(call: Extract<Recording, { kind: 'call' }>, fn: FunctionView): string | string[] {
  const r = call.resource;
  if (!r) return '*';
  const variable = r.env.find((name) => name in fn.environment);
  if (!variable) return [`${r.name}: named by ${r.env.length ? r.env.join(', ') : 'no environment variable'}, which the function's Environment does not set`];
  const value = fn.environment[variable] as { Ref?: string };
  const service = call.action.split(':')[0];
  if (service === 'ses') return `arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/${render(value)}`;
  if (!value.Ref) return [`${variable} is not a reference to a resource of the stack`];
  const base = `<${value.Ref}.Arn>`;
  if (r.index) return `${base}/index/${r.index}`;
  if (r.key !== undefined) return `${base}/${r.key}`;
  return base;
}

/** What the recordings need that the template does not give, one line per finding. */
export function checkRecordings(recordings: Recording[], template: TemplateJson): string[] {
  const findings = new Set<string>();
  for (const record of recordings) {
    const fn = functionView(template, record.fn);
    if (!fn) {
      findings.add(`${record.fn}: no such function in the stack`);
      continue;
    }
    if (record.kind === 'env') {
      if (record.required && !(record.name in fn.environment) && !LAMBDA_SETS.has(record.name)) {
        findings.add(`${record.fn}: reads ${record.name}, which its Environment does not set`);
      }
      continue;
    }
    if (record.action.includes(':unmapped:')) {
      findings.add(`${record.fn}: ${record.command} has no IAM action in infra/local/recording.ts`);
      continue;
    }
    const arn = arnOf(record, fn);
    if (Array.isArray(arn)) {
      findings.add(`${record.fn}: ${record.action} on ${arn[0]}`);
      continue;
    }
    const allowed = fn.statements.some((s) => s.actions.some((a) => glob(a, record.action)) && s.resources.some((res) => glob(res, arn)));
    if (!allowed) findings.add(`${record.fn}: ${record.action} on ${arn} (${record.command}) is not allowed by its role`);
  }
  return [...findings].sort();
}

const resourcesOf = (template: TemplateJson, type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const isArnOf = (value: Json, logicalId: string) => render(value) === `<${logicalId}.Arn>`;

/** The settings of a job-table queue trigger (`maxConcurrency` undefined: no limit). */
interface QueueTrigger {
  batchSize: number;
  maxBatchingWindowSeconds: number;
  maxConcurrency: number | undefined;
  maxReceiveCount: number;
}

/** The event source mapping that invokes a function, with the logical id of the queue it reads. */
function mappingOf(template: TemplateJson, fn: FunctionView): { properties: Record<string, Json>; queueId: string } | undefined {
  const mapping = resourcesOf(template, 'AWS::Lambda::EventSourceMapping').find(([, r]) => render(r.Properties?.FunctionName) === `<${fn.logicalId}>`);
  if (!mapping) return undefined;
  const properties = mapping[1].Properties ?? {};
  return { properties, queueId: render(properties.EventSourceArn).replace(/^<(.*)\.Arn>$/, '$1') };
}

/** A queue trigger against the function's event source mapping and its queue's redrive policy. */
function queueFindings(template: TemplateJson, jobId: string, fn: FunctionView, want: QueueTrigger): string[] {
  const mapping = mappingOf(template, fn);
  if (!mapping) return [`${jobId}: no event source mapping`];
  const p = mapping.properties;
  const got: Record<string, Json> = {
    batchSize: p.BatchSize,
    maxBatchingWindowSeconds: p.MaximumBatchingWindowInSeconds,
    maxConcurrency: (p.ScalingConfig as { MaximumConcurrency?: number } | undefined)?.MaximumConcurrency,
    partialBatchResponses: ((p.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
    maxReceiveCount: (template.Resources[mapping.queueId]?.Properties?.RedrivePolicy as { maxReceiveCount?: number } | undefined)?.maxReceiveCount,
  };
  const expected: Record<string, Json> = { ...want, partialBatchResponses: true };
  return Object.entries(expected).flatMap(([name, value]) => (got[name] === value ? [] : [`${jobId}: ${name} ${String(got[name])} in the stack, ${String(value)} in the job table`]));
}

/** A table-stream trigger against the function's event source mapping: batch, window, retries, bisect, filter, on-failure queue. */
function streamFindings(template: TemplateJson, jobId: string, fn: FunctionView, want: Extract<JobDef['trigger'], { tableStream: unknown }>['tableStream']): string[] {
  const mapping = mappingOf(template, fn);
  if (!mapping) return [`${jobId}: no event source mapping`];
  const p = mapping.properties;
  const filter = JSON.stringify((p.FilterCriteria as { Filters?: Array<{ Pattern?: string }> } | undefined)?.Filters?.map((f) => f.Pattern) ?? []);
  const got: Record<string, Json> = {
    batchSize: p.BatchSize,
    maxBatchingWindowSeconds: p.MaximumBatchingWindowInSeconds,
    maxRetryAttempts: p.MaximumRetryAttempts,
    keyPrefix: filter.includes(`\\"prefix\\":\\"${want.keyPrefix}\\"`) ? want.keyPrefix : filter,
    bisect: p.BisectBatchOnFunctionError,
    partialBatchResponses: ((p.FunctionResponseTypes as string[] | undefined) ?? []).includes('ReportBatchItemFailures'),
    onFailure: (p.DestinationConfig as { OnFailure?: { Destination?: Json } } | undefined)?.OnFailure?.Destination !== undefined,
  };
  const expected: Record<string, Json> = { ...want, bisect: true, partialBatchResponses: true, onFailure: true };
  return Object.entries(expected).flatMap(([name, value]) => (got[name] === value ? [] : [`${jobId}: ${name} ${String(got[name])} in the stack, ${String(value)} in the job table`]));
}

/** The async invocation settings (retries, destinations) of a function, if the stack configures them. */
function invokeConfigOf(template: TemplateJson, fn: FunctionView | undefined): Record<string, Json> | undefined {
  return resourcesOf(template, 'AWS::Lambda::EventInvokeConfig').find(([, r]) => fn && render(r.Properties?.FunctionName) === `<${fn.logicalId}>`)?.[1].Properties;
}

type Destinations = { OnSuccess?: { Destination?: Json }; OnFailure?: { Destination?: Json } } | undefined;

/** The job whose failures another job takes "gets 2 retries": the job table says so in asyncFailureOf's comment, not in a field. */
const FAILURE_SOURCE_RETRIES = 2;

/** The job table's triggers and success destinations against the template, one line per difference. */
export function checkTriggers(template: TemplateJson, jobs: Array<JobDef & { id: string }> = jobList): string[] {
  const findings: string[] = [];
  // The change queue is the one the eventChanges job reads; `successTo: 'changes'` names it.
  const changeJob = jobs.find((j) => 'eventChanges' in j.trigger);
  const changeJobFn = changeJob && functionView(template, changeJob.id);
  const changeQueue = changeJobFn && mappingOf(template, changeJobFn)?.queueId;
  for (const job of jobs) {
    const fn = functionView(template, job.id);
    if (!fn) {
      findings.push(`${job.id}: no function in the stack`);
      continue;
    }
    const t = job.trigger;
    if ('schedule' in t) {
      const rule = resourcesOf(template, 'AWS::Events::Rule').find(([, r]) => (r.Properties?.Targets as Array<{ Arn: Json }>).some((target) => isArnOf(target.Arn, fn.logicalId)));
      if (!rule) findings.push(`${job.id}: no schedule rule targets it`);
      else if (rule[1].Properties?.ScheduleExpression !== t.schedule) findings.push(`${job.id}: schedule ${String(rule[1].Properties?.ScheduleExpression)} in the stack, ${t.schedule} in the job table`);
    } else if ('importsUpload' in t) {
      const configs = resourcesOf(template, 'Custom::S3BucketNotifications').flatMap(
        ([, r]) => (r.Properties?.NotificationConfiguration as { LambdaFunctionConfigurations?: Array<Record<string, Json>> }).LambdaFunctionConfigurations ?? [],
      );
      const mine = configs.find((c) => isArnOf(c.LambdaFunctionArn, fn.logicalId));
      const prefix = (mine?.Filter as { Key?: { FilterRules?: Array<{ Name: string; Value: string }> } } | undefined)?.Key?.FilterRules?.find((f) => f.Name.toLowerCase() === 'prefix')?.Value;
      if (!mine) findings.push(`${job.id}: no bucket notification invokes it`);
      else if (prefix !== t.importsUpload || ![mine.Events].flat().includes('s3:ObjectCreated:*')) findings.push(`${job.id}: notified for ${String(mine.Events)} under ${String(prefix)}, the job table says objects created under ${t.importsUpload}`);
    } else if ('trackingQueue' in t) findings.push(...queueFindings(template, job.id, fn, t.trackingQueue));
    else if ('sesEventsQueue' in t) findings.push(...queueFindings(template, job.id, fn, { ...t.sesEventsQueue, maxConcurrency: undefined }));
    else if ('eventChanges' in t) findings.push(...queueFindings(template, job.id, fn, t.eventChanges));
    else if ('webhookDeliveries' in t) findings.push(...queueFindings(template, job.id, fn, t.webhookDeliveries));
    else if ('tableStream' in t) findings.push(...streamFindings(template, job.id, fn, t.tableStream));
    else if ('asyncFailureOf' in t) {
      const config = invokeConfigOf(template, functionView(template, t.asyncFailureOf));
      const destination = (config?.DestinationConfig as Destinations)?.OnFailure?.Destination;
      if (!destination || !isArnOf(destination, fn.logicalId)) findings.push(`${job.id}: not the failure destination of ${t.asyncFailureOf}`);
      else if (config?.MaximumRetryAttempts !== FAILURE_SOURCE_RETRIES) {
        findings.push(`${job.id}: retry attempts of ${t.asyncFailureOf} ${String(config?.MaximumRetryAttempts)} in the stack, ${FAILURE_SOURCE_RETRIES} in the job table`);
      }
    } else {
      // A kind added to JobTrigger fails the type check here, and, should a row get past it, the run.
      const unchecked: never = t;
      findings.push(`${job.id}: trigger ${Object.keys(unchecked).join(', ')} is not checked against the stack (test/helpers/deployed-access.ts)`);
    }
    findings.push(...successFindings(job, (invokeConfigOf(template, fn)?.DestinationConfig as Destinations)?.OnSuccess?.Destination, changeQueue));
  }
  return findings;
}

/** Where the job table sends a job's async results against the function's onSuccess destination. */
function successFindings(job: JobDef & { id: string }, destination: Json, changeQueue: string | undefined): string[] {
  const got = destination === undefined ? 'no destination' : render(destination);
  const successTo = job.successTo;
  switch (successTo) {
    case undefined:
      return destination === undefined ? [] : [`${job.id}: async results go to ${got} in the stack, nowhere in the job table`];
    case 'changes':
      if (!changeQueue) return [`${job.id}: async results go to the change queue in the job table, but no job reads it (an eventChanges trigger with an event source mapping)`];
      return destination !== undefined && isArnOf(destination, changeQueue) ? [] : [`${job.id}: async results go to ${got} in the stack, the change queue <${changeQueue}.Arn> in the job table`];
    default: {
      const unchecked: never = successTo;
      return [`${job.id}: successTo ${String(unchecked)} is not checked against the stack (test/helpers/deployed-access.ts)`];
    }
  }
}
