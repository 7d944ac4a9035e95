/**
 * Hooks through which the local runtime records each AWS SDK call and environment read of a function
 * (infra/local/recording.ts); in AWS nothing is installed and a hook costs a property lookup. Tests compare the
 * recordings with the synthesized template (test/infra/deployed-access.test.ts).
 */
export interface Recorder {
  sdkCall(clientName: string, commandName: string, input: unknown): void;
  envRead(name: string, required: boolean): void;
}

const recorder = (): Recorder | undefined => (globalThis as { __serviceRecorder?: Recorder }).__serviceRecorder;

/** Records a read of an environment variable (`required`: the function fails without it). */
export function recordEnvRead(name: string, required: boolean): void {
  recorder()?.envRead(name, required);
}

interface SdkClient {
  middlewareStack: { add(middleware: unknown, options: { step: 'initialize'; name: string }): void };
}

/** Adds the recording middleware to an SDK client (every command it sends, before signing). */
export function recordSdkCalls<C extends SdkClient>(client: C): C {
  client.middlewareStack.add(
    (next: (args: { input: unknown }) => unknown, context: { clientName?: string; commandName?: string }) => (args: { input: unknown }) => {
      recorder()?.sdkCall(context.clientName ?? '', context.commandName ?? '', args.input);
      return next(args);
    },
    { step: 'initialize', name: 'serviceRecorder' },
  );
  return client;
}

/** Records the SDK call a local stand-in makes instead (the outbox mailer stands for SES's SendEmail). */
export function recordStandInCall(clientName: string, commandName: string, input: unknown): void {
  recorder()?.sdkCall(clientName, commandName, input);
}
