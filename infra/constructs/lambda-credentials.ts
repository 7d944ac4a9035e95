/**
 * Stands in for `@aws-sdk/credential-provider-node` in the function bundles (bundling.ts): Lambda hands a function
 * its role's credentials in the environment, so the rest of the SDK's default chain never applies there and only
 * weighs on every bundle. Local runs and tests do not bundle, so they keep the full chain.
 */
import { fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';

export const defaultProvider = (init?: FromEnvInit) => fromEnv(init);
