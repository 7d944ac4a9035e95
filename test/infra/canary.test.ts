import { type CfnElement, Stack } from 'aws-cdk-lib';
import { HttpApi, type HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpUrlIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { beforeAll, describe, expect, it } from 'vitest';
import { jobList } from '../../shared/jobs.js';
import { routeList } from '../../shared/routes.js';
import { ServiceStack, routeStackOf } from '../../infra/service-stack.js';
import { foldNested, templateSizes, testApp } from '../helpers/cdk.js';
import { functionView, render, synthesizedTemplate, type TemplateJson } from '../helpers/deployed-access.js';

/** Folded: the functions, their aliases, deployment groups and alarms are in nested stacks. */
let template: TemplateJson;
let parent: TemplateJson;
beforeAll(() => {
  template = synthesizedTemplate({ folded: true });
  parent = synthesizedTemplate();
});

const ofType = (type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);

/** The `live` alias of a function and the version it points at. */
function aliasOf(id: string) {
  const fn = functionView(template, id)!;
  const versions = ofType('AWS::Lambda::Version').filter(([, v]) => render(v.Properties!.FunctionName) === `<${fn.logicalId}>`);
  const alias = ofType('AWS::Lambda::Alias').find(([, a]) => render(a.Properties!.FunctionName) === `<${fn.logicalId}>`);
  return { fn, versions, alias };
}

describe('canary releases of the API functions', () => {
  const apiFunctions = [...routeList.map((r) => r.id), 'fallback'];

  it('publishes every API function as a version behind its live alias, and the API invokes the alias', () => {
    const integrations = ofType('AWS::ApiGatewayV2::Integration').map(([, i]) => render(i.Properties!.IntegrationUri));
    for (const id of apiFunctions) {
      const { versions, alias } = aliasOf(id);
      expect(versions, id).toHaveLength(1);
      expect(alias?.[1].Properties, id).toMatchObject({ Name: 'live' });
      expect(render(alias![1].Properties!.FunctionVersion), id).toBe(`<${versions[0][0]}.Version>`);
      expect(integrations, id).toContain(`<${alias![0]}>`);
    }
    expect(integrations.some((uri) => /^<[A-Za-z]+[0-9A-F]{8}\.Arn>$/.test(uri) && !uri.includes('Live'))).toBe(false);
    for (const job of jobList) expect(aliasOf(job.id).alias, job.id).toBeUndefined();
  });

  it('shifts 10 % for 5 minutes, then all, and rolls back on the function\'s errors or the API\'s 5xx', () => {
    const groups = ofType('AWS::CodeDeploy::DeploymentGroup');
    expect(groups).toHaveLength(apiFunctions.length);
    const alarms = Object.fromEntries(ofType('AWS::CloudWatch::Alarm'));
    for (const id of apiFunctions) {
      const { alias } = aliasOf(id);
      const policy = alias![1] as { UpdatePolicy?: { CodeDeployLambdaAliasUpdate?: { DeploymentGroupName: unknown } } };
      const groupName = render(policy.UpdatePolicy?.CodeDeployLambdaAliasUpdate?.DeploymentGroupName);
      const [, group] = groups.find(([logicalId]) => groupName === `<${logicalId}>`)!;
      expect(group.Properties, id).toMatchObject({
        DeploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
        AutoRollbackConfiguration: { Enabled: true, Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM']) as string[] },
        AlarmConfiguration: { Enabled: true },
      });
      const watched = (group.Properties!.AlarmConfiguration as { Alarms: Array<{ Name: unknown }> }).Alarms.map((a) => render(a.Name).slice(1, -1));
      const metrics = watched.map((logicalId) => alarms[logicalId]?.Properties);
      // The function's errors on one-minute periods, and the API's 5xx rate on one-minute periods.
      expect(metrics.some((m) => m?.MetricName === 'Errors' && m.Period === 60 && JSON.stringify(m.Dimensions).includes(functionView(template, id)!.logicalId)), id).toBe(true);
      expect(metrics.some((m) => JSON.stringify(m?.Metrics ?? []).includes('5xx') && JSON.stringify(m?.Metrics).includes('"Period":60')), id).toBe(true);
    }
  });

  it('keeps every template within CloudFormation\'s limits: the parent ≤ 300 resources, each nested stack ≤ 400', () => {
    const sizes = templateSizes(new ServiceStack(testApp(), 'Sizes', { mailFrom: 'news@example.com' }));
    console.log(`template sizes (today's ${routeList.length} routes): ${JSON.stringify(sizes)}`);
    const [parentSize, ...nested] = Object.values(sizes);
    expect(parentSize.resources).toBeLessThanOrEqual(300);
    expect(nested.length).toBeGreaterThan(1);
    for (const [path, size] of Object.entries(sizes)) {
      expect(size.resources, path).toBeLessThanOrEqual(400);
      expect(size.parameters, path).toBeLessThan(200);
      expect(size.outputs, path).toBeLessThan(200);
    }
    // Every route function is in a nested stack, not in the parent.
    for (const { id } of routeList) expect(functionView(parent, id), id).toBeUndefined();
  });

  it('keeps in the parent, under their logical ids of before the nested stacks, everything that holds data and the API routes', () => {
    // A changed logical id is a new resource: CloudFormation would replace the table, a bucket or a queue (with its data).
    const kept: Record<string, string> = {
      TableCD117FA1: 'AWS::DynamoDB::GlobalTable', ImportsC5EA4F6F: 'AWS::S3::Bucket', EventsD32975C2: 'AWS::S3::Bucket', EventTablesResults178750F6: 'AWS::S3::Bucket',
      TopicKeyB2E0C9CB: 'AWS::KMS::Key', ChangeBusD6399F52: 'AWS::Events::EventBus', EventTablesDatabase402204DE: 'AWS::Glue::Database', EventTablesTable8ABAA32A: 'AWS::Glue::Table',
      EventTablesWorkgroup57A39E93: 'AWS::Athena::WorkGroup', OperationsAlarmTopic909EF7A3: 'AWS::SNS::Topic', SesEventsED116675: 'AWS::SNS::Topic', ApiAccessLogsE9DF007D: 'AWS::Logs::LogGroup',
      ...Object.fromEntries(
        ['ChangeQueueC069E0C0', 'TrackingQueue9DC18D9D', 'WebhookDeadLettersCE7A6689', 'WebhookQueueA9D318EA', 'catalogueFeedsFailedRuns4DC3A256', 'eventsAssembleFailedRuns4BBA46C5',
          'eventsAssembleHoursFailedRunsAD355349', 'importsSweeperFailedRuns9A8C2946', 'importsWorkerFailedFailedRuns23CE62E5', 'optinRemindersFailedRuns8733720B', 'sesEventsDeadLetters050B2DFC',
          'sesEventsQueueA7C616E9', 'sesEventsUndelivered5680CB09', 'trackingViewsDeadLettersBF7F5E33', 'webhooksFanoutDeadLetters10132E4F'].map((id) => [id, 'AWS::SQS::Queue']),
      ),
    };
    for (const [logicalId, type] of Object.entries(kept)) expect(parent.Resources[logicalId]?.Type, logicalId).toBe(type);
    // The routes where `api.addRoutes` put them: a route key is unique in an API, so a route made anew elsewhere would collide with the old one.
    const scratch = new Stack(testApp(), 'Scratch');
    const api = new HttpApi(scratch, 'Api');
    for (const route of routeList) {
      const [made] = api.addRoutes({ path: route.path, methods: [route.method as HttpMethod], integration: new HttpUrlIntegration(`${route.id}Url`, 'https://example.com') });
      const logicalId = scratch.getLogicalId(made.node.defaultChild as CfnElement);
      expect(parent.Resources[logicalId]?.Properties, route.id).toMatchObject({ RouteKey: `${route.method} ${route.path}` });
    }
  });

  it('has room for 20 more routes: every template stays under 500 resources (and 200 parameters and outputs)', () => {
    const model = routeList[0];
    const extra = Array.from({ length: 20 }, (_, i) => ({ ...model, id: `extraRoute${i}` as typeof model.id, path: `/v1/extra-${i}/{id}` }));
    const stack = new ServiceStack(testApp(), 'Headroom', { mailFrom: 'news@example.com', routes: [...routeList, ...extra] });
    const sizes = templateSizes(stack);
    console.log(`template sizes (${routeList.length} + 20 routes): ${JSON.stringify(sizes)}`);
    const [parentSize] = Object.values(sizes);
    expect(parentSize.resources).toBeLessThanOrEqual(300);
    for (const [path, size] of Object.entries(sizes)) {
      expect(size.resources, path).toBeLessThan(500);
      expect(size.parameters, path).toBeLessThan(200);
      expect(size.outputs, path).toBeLessThan(200);
    }
    // The extra rows are really built: a function and an API route each.
    const folded = foldNested(stack) as TemplateJson;
    for (const { id, path } of extra) {
      expect(functionView(folded, id), id).toBeDefined();
      expect(Object.values(folded.Resources).some((r) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties?.RouteKey === `${model.method} ${path}`), id).toBe(true);
    }
  });

  it('puts a route in the nested stack its id names, whatever the other rows', () => {
    // Adding or removing a row never moves another route's function to another stack (which would replace it).
    const placement = (routes: Array<(typeof routeList)[number]>) => {
      const stack = new ServiceStack(testApp(), 'Placement', { mailFrom: 'news@example.com', routes });
      return Object.fromEntries(routes.map((r) => [r.id, stack.node.findAll().find((c) => c.node.id === r.id && c.node.scope !== stack)?.node.scope?.node.id]));
    };
    const all = placement(routeList);
    const some = placement(routeList.filter((_, i) => i % 3 === 0));
    expect(Object.keys(some).length).toBeGreaterThan(5);
    for (const [id, nested] of Object.entries(some)) {
      expect(nested, id).toBe(`RouteFunctions${routeStackOf(id)}`);
      expect(all[id], id).toBe(nested);
    }
  });
});
