/**
 * The Powertools Tracer (X-Ray), loaded only in Lambda (shared/observability
 * `index.ts`): importing it loads the X-Ray SDK, whose context propagation
 * (cls-hooked) installs a process-wide async hook with a destroy callback,
 * and from then on every promise of the process pays for it (bench/tracer.ts
 * measures it), traced or not.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { SERVICE_NAME } from './names.js';

export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME });

/** The invocation's segment, without the response in it. */
export const tracerMiddleware = () => captureLambdaHandler(tracer, { captureResponse: false });
