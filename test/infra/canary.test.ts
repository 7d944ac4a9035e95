import { beforeAll, describe, expect, it } from 'vitest';
import { jobList } from '../../shared/jobs.js';
import { routeList } from '../../shared/routes.js';
import { functionView, render, synthesizedTemplate, type TemplateJson } from '../helpers/deployed-access.js';

/** Folded: the alarms the deployment groups watch are in the nested stack. */
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

  it('stays under CloudFormation\'s 500 resources per stack (the alarms in a nested stack of their own)', () => {
    const count = Object.keys(parent.Resources).length;
    console.log(`stack resources: ${count} of 500`);
    expect(count).toBeLessThan(500);
  });
});
