/**
 * The Powertools Tracer (X-Ray), loaded only in Lambda: the X-Ray SDK's context propagation installs a process-wide
 * async hook that every promise pays for, traced or not (bench/tracer.ts).
 */
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import { SERVICE_NAME } from './names.js';

export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME || SERVICE_NAME });

/** The invocation's segment, without the response in it. */
export const tracerMiddleware = () => captureLambdaHandler(tracer, { captureResponse: false });
