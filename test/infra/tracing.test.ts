import { beforeAll, describe, expect, it } from 'vitest';
import { POWERTOOLS_LAYER } from '../../infra/constructs/bundling.js';
import { observe, traced, tracer } from '../../shared/observability/index.js';
import { jobList } from '../../shared/jobs.js';
import { routeList } from '../../shared/routes.js';
import { functionView, render, synthesizedTemplate, type TemplateJson } from '../helpers/deployed-access.js';

let template: TemplateJson;
beforeAll(() => {
  template = synthesizedTemplate();
});

describe('traces', () => {
  it('every function traces actively (X-Ray) and gets the Powertools layer', () => {
    for (const id of [...routeList.map((r) => r.id), 'fallback', ...jobList.map((j) => j.id)]) {
      const fn = template.Resources[functionView(template, id)!.logicalId].Properties!;
      expect(fn.TracingConfig, id).toEqual({ Mode: 'Active' });
      const layers = (fn.Layers as unknown[]).map(render);
      expect(layers, id).toEqual([`arn:<AWS::Partition>:lambda:<AWS::Region>:${POWERTOOLS_LAYER.account}:layer:${POWERTOOLS_LAYER.name}:${POWERTOOLS_LAYER.version}`]);
    }
  });

  it('the one middy stack and the job wrapper start with the Tracer; off outside Lambda, where traced() only runs the call', async () => {
    expect(observe('route', 'x')).toHaveLength(4);
    expect(tracer.isTracingEnabled()).toBe(false);
    expect(traced('### x', () => 7)).toBe(7);
    await expect(traced('### x', () => Promise.resolve(8))).resolves.toBe(8);
    await expect(traced('### x', () => Promise.reject(new Error('kept')))).rejects.toThrow('kept');
  });
});
