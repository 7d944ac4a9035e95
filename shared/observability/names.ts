/** Service name and metrics namespace: read by the Powertools instances and by the CDK alarms and dashboard. */
export const SERVICE_NAME = 'newsletter-service';
export const METRICS_NAMESPACE = 'NewsletterService';
