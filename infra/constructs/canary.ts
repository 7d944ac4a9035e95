import { Duration, Stack, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as codedeploy from 'aws-cdk-lib/aws-codedeploy';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

/** How a release shifts traffic: 10 % to the new version for 5 minutes, then all of it (docs/operations.md, "Releases"). */
export const RELEASE_CONFIG = codedeploy.LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES;
/** The alias API Gateway invokes: the version CodeDeploy has released (and, during a release, the canary). */
export const LIVE_ALIAS = 'live';

const ONE_MINUTE = Duration.minutes(1);

/**
 * Canary releases of the API's functions: each is published as a version
 * behind the `live` alias, which the API's integration invokes, and a
 * CodeDeploy deployment group shifts the alias to a new version by
 * {@link RELEASE_CONFIG}. Two alarms watch a release, on one-minute periods so
 * they can fire inside the canary's five minutes: the function's errors
 * (crashes, timeouts, unhandled errors; {@link CanaryReleases.watch}) and the
 * API's 5xx rate. Either one in alarm stops the release and shifts all traffic back to
 * the old version; so does a failed or stopped deployment.
 */
export class CanaryReleases extends Construct {
  readonly application: codedeploy.LambdaApplication;
  /** The API's 5xx rate on one-minute periods (requests ≥ 20 in the minute). */
  readonly api5xx: cw.Alarm;
  private readonly role: iam.Role;
  private readonly groups = new Map<string, codedeploy.LambdaDeploymentGroup>();

  constructor(scope: Construct, id: string, { api }: { api: HttpApi }) {
    super(scope, id);
    this.application = new codedeploy.LambdaApplication(this, 'Application');
    this.role = new iam.Role(this, 'DeployRole', {
      assumedBy: new iam.ServicePrincipal('codedeploy.amazonaws.com'),
      managedPolicies: [iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason: "AWS's own policy for CodeDeploy's Lambda deployments: it updates aliases and reads the deployment's alarms, nothing else.",
    });
    const requests = api.metricCount({ period: ONE_MINUTE, statistic: 'Sum' });
    const errors = api.metricServerError({ period: ONE_MINUTE, statistic: 'Sum' });
    this.api5xx = new cw.Alarm(this, 'Api5xxDuringRelease', {
      alarmDescription: 'More than 1% of API requests answered 5xx in a minute: stops a release in progress and rolls it back. Runbook: docs/operations.md#releases',
      metric: new cw.MathExpression({ expression: 'IF(requests >= 20, 100 * errors / requests, 0)', usingMetrics: { requests, errors }, period: ONE_MINUTE, label: 'API 5xx % (1 min)' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
    });
  }

  /**
   * Publishes `fn` behind its `live` alias with a deployment group; returns the alias for the API integration.
   * The alias and its group go in the function's own template (a nested stack of route functions: service-stack.ts):
   * CloudFormation's alias UpdatePolicy names a deployment group of the same template. The application, the role
   * and the API's 5xx alarm stay here, passed to a nested stack as parameters.
   */
  release(id: string, fn: lambda.Function): lambda.Alias {
    const scope: Construct = Stack.of(fn) === Stack.of(this) ? this : Stack.of(fn);
    const alias = new lambda.Alias(scope, `${id}Live`, { aliasName: LIVE_ALIAS, version: fn.currentVersion });
    const group = new codedeploy.LambdaDeploymentGroup(scope, `${id}Release`, {
      application: this.application,
      alias,
      deploymentConfig: RELEASE_CONFIG,
      alarms: [this.api5xx],
      autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
      role: this.role,
    });
    this.groups.set(id, group);
    return alias;
  }

  /**
   * Adds each released function's own errors alarm (the runbook's
   * `function-errors`, on one-minute periods: infra/constructs/operations.ts)
   * to its deployment group, and the alarm topic to the release's API alarm.
   * One alarm per function serves both: a stack holds at most 500 resources.
   */
  watch(errorAlarms: ReadonlyMap<string, cw.IAlarm>, alarmTopic: sns.ITopic): void {
    for (const [id, group] of this.groups) {
      const alarm = errorAlarms.get(id);
      if (!alarm) throw new Error(`${id}: released without an errors alarm`);
      group.addAlarm(alarm);
    }
    this.api5xx.addAlarmAction(new SnsAction(alarmTopic));
    this.api5xx.addOkAction(new SnsAction(alarmTopic));
  }
}
