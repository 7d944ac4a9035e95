/**
 * Stands in for `@aws-sdk/credential-provider-node` in the function bundles
 * (see bundling.ts). Lambda hands a function its role's credentials in
 * AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, the first
 * link of the SDK's default chain; the other links (SSO, STS, web identity,
 * ini files, instance metadata) never apply there and cost about 100 KB of
 * every bundle. Local runs and tests do not bundle, so they keep the full chain.
 */
import { fromEnv, type FromEnvInit } from '@aws-sdk/credential-provider-env';

export const defaultProvider = (init?: FromEnvInit) => fromEnv(init);
