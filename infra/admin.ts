/**
 * Admin CLI for support staff: `npm run admin -- <command> [args]`.
 * Against the local stack it reads DATA_DIR/local-env.json (written by
 * `npm start`, which must be running); against a deployed stack set
 * TABLE_NAME (and AWS credentials/region) as for the functions.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { applyEnv } from './local/env.js';

const usage = `Usage: npm run admin -- <command> [options]
  create-client <username> [--premium] [--hosts a.example,*.b.example]
                                             creates a client; prints its API key once
  set-hosts <username> --hosts a.example,*.b.example
                                             replaces the client's site hosts (recommendations:
                                             only pages on them are tracked and recommended;
                                             \`*.b.example\` = any subdomain of b.example; none = off)
  rotate-key <username>                      replaces the API key; prints the new one once
  create-list <username> <name>              creates a list; prints it
  create-form <username> --lists 1,2 [--global] [--redirect URL]
                                             creates a list form (or a global opt-in form); prints its key
  create-block <username> [--settings JSON]  creates a recommendation block (settings validated as
                                             PUT /v1/blocks/{block_key} does); prints its key
  block-settings <username> <block_key> --settings JSON
                                             changes a block's settings (a JSON merge of the given
                                             top-level settings, as PUT /v1/blocks/{block_key});
                                             prints the block
  backfill-blocks <username>                 lists the client's blocks made before GET /v1/blocks
                                             listed them (one Scan of the table; run once after upgrading)
  enable-premium <username>                  enables premium events (event file downloads)
  set-rate-limits <username> --per-ip N --per-key N
                                             overrides the opt-in rate limits (per minute)
  set-signed-ids <username> --on|--off [--rotate]
                                             requires signed reader ids on the recommendation,
                                             tracking and preferences routes (or not); prints the
                                             signing secret (--rotate: a new one)
  set-feed <username> <url> | --off          sets the client's catalogue feed (RSS 2.0, Atom or a news
                                             sitemap), polled every 10 minutes; --off stops polling
                                             (the articles it gave stay)
  link-secret <username> [--rotate [--grace-days N]]
                                             prints the secret of the client's reader links
                                             (unsubscribe, preferences; made on first use);
                                             --rotate makes a new one: links made with the old
                                             one keep working N days (default 60), then 404
  recount <username> [--lists 1,2]           sets each list's counters to a count of its subscribers (once, after
                                             turning on the table's stream of a table written before it, with no
                                             write in flight: docs/operations.md); prints the counts
  backfill-global-forms <username>           sets the lists the preference centre offers from the
                                             client's global forms made before it kept them (one
                                             Scan of the table; run once after upgrading)
  set-branding <username> [--name TEXT] [--logo URL] [--colour #rrggbb] [--address TEXT]
               [--privacy URL] [--remove logo,colour,address,privacy,name]
                                             what the reader pages and opt-in emails show of the
                                             publisher: display name (else the username), logo (https,
                                             loaded by the reader's browser only), brand colour, postal
                                             address (line breaks kept), privacy-policy URL (https);
                                             changes only the given settings; prints the branding
  show-client <username>                     prints the client (without its key hash), with its
                                             feed's last poll (status, error, counts)`;

function settingsJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error('--settings: not valid JSON');
  }
}

/** The set-branding flags and the branding setting each one sets. */
const BRANDING_FLAGS = { name: 'displayName', logo: 'logoUrl', colour: 'brandColour', address: 'postalAddress', privacy: 'privacyUrl' } as const;
type BrandingFlag = keyof typeof BRANDING_FLAGS;

/** The settings given to set-branding, checked by the schema that stores them; an error names the flag and what is wrong. */
async function brandingArgs(values: Partial<Record<BrandingFlag | 'color' | 'remove', string>>) {
  const v = await import('valibot');
  const { BrandingSchema } = await import('../shared/clients/branding.js');
  const flags = Object.keys(BRANDING_FLAGS) as BrandingFlag[];
  if (values.color !== undefined) values.colour ??= values.color;
  const set: Record<string, string> = {};
  for (const flag of flags) if (values[flag] !== undefined) set[BRANDING_FLAGS[flag]] = values[flag];
  const parsed = v.safeParse(BrandingSchema, set);
  if (!parsed.success) {
    const field = parsed.issues[0].path?.[0]?.key;
    const flag = flags.find((f) => BRANDING_FLAGS[f] === field);
    throw new Error(`--${flag}: ${parsed.issues[0].message} (got ${JSON.stringify(values[flag!])})`);
  }
  const RemoveSchema = v.array(v.picklist(flags, `--remove: each setting is one of ${flags.join(', ')}`));
  const remove = v.safeParse(RemoveSchema, values.remove === undefined ? [] : values.remove.split(',').map((s) => s.trim()));
  if (!remove.success) throw new Error(`${remove.issues[0].message} (got ${JSON.stringify(values.remove)})`);
  const both = remove.output.find((flag) => values[flag] !== undefined);
  if (both) throw new Error(`--${both} and --remove ${both}: give one of them`);
  if (Object.keys(set).length === 0 && remove.output.length === 0) throw new Error(`set-branding needs at least one of ${flags.map((f) => `--${f}`).join(', ')} or --remove`);
  return { set: parsed.output, remove: remove.output.map((flag) => BRANDING_FLAGS[flag]) };
}

function loadEnvironment() {
  if (process.env.TABLE_NAME) return;
  const file = join(resolve(process.env.DATA_DIR ?? '.data'), 'local-env.json');
  if (!existsSync(file)) {
    console.error(`No TABLE_NAME set and no ${file}: start the local stack with \`npm start\`, or set TABLE_NAME for a deployed stack.`);
    process.exit(2);
  }
  applyEnv(JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>);
}

async function main(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      premium: { type: 'boolean' },
      hosts: { type: 'string' },
      global: { type: 'boolean' },
      lists: { type: 'string' },
      redirect: { type: 'string' },
      settings: { type: 'string' },
      'per-ip': { type: 'string' },
      'per-key': { type: 'string' },
      on: { type: 'boolean' },
      off: { type: 'boolean' },
      rotate: { type: 'boolean' },
      'grace-days': { type: 'string' },
      name: { type: 'string' },
      logo: { type: 'string' },
      colour: { type: 'string' },
      color: { type: 'string' },
      address: { type: 'string' },
      privacy: { type: 'string' },
      remove: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, username, ...rest] = positionals;
  if (!command || values.help || !username) {
    console.log(usage);
    process.exit(command ? 2 : 0);
  }
  loadEnvironment();
  const clients = await import('../shared/clients/clients.js');
  const lists = await import('../shared/lists/lists.js');
  const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  switch (command) {
    case 'create-client': {
      const { client, apiKey } = await clients.createClient(username, { premiumEvents: values.premium ?? false, siteHosts: values.hosts });
      return print({ username: client.id, api_key: apiKey, tracking_key: client.trackingKey, default_list_id: client.defaultListId, site_hosts: client.siteHosts ?? [] });
    }
    case 'rotate-key':
      return print({ username, api_key: await clients.rotateApiKey(username) });
    case 'create-list':
      if (!rest[0]) throw new Error('create-list needs a name');
      return print(await lists.createList((await clients.requireClient(username)).id, rest.join(' ')));
    case 'create-form': {
      const listIds = (values.lists ?? '').split(',').filter(Boolean).map(Number);
      const formKey = await clients.createForm(username, { listIds, global: values.global ?? false, confirmRedirectUrl: values.redirect });
      return print({ username, form_key: formKey, list_ids: listIds, global: values.global ?? false });
    }
    case 'create-block': {
      const { createBlockWithSettings } = await import('../shared/recos/block-settings.js');
      const block = await createBlockWithSettings(username, values.settings ? settingsJson(values.settings) : {});
      return print({ username, ...block });
    }
    case 'block-settings': {
      if (!rest[0] || values.settings === undefined) throw new Error('block-settings needs a block key and --settings JSON');
      const { putBlockSettings } = await import('../shared/recos/block-settings.js');
      return print({ username, ...(await putBlockSettings((await clients.requireClient(username)).id, rest[0], settingsJson(values.settings))) });
    }
    case 'backfill-blocks':
      return print({ username, block_keys: await clients.backfillBlockListing(username) });
    case 'set-hosts': {
      if (values.hosts === undefined) throw new Error('set-hosts needs --hosts (an empty value turns tracking off)');
      // Also forgets the feed's validators: items refused for their host are applied at the next poll.
      const { setSiteHostsAndRereadFeed } = await import('../shared/recos/feeds.js');
      return print({ username, site_hosts: await setSiteHostsAndRereadFeed(username, values.hosts) });
    }
    case 'enable-premium':
      await clients.setClientSetting(username, 'premiumEvents', true);
      return print({ username, premium_events: true });
    case 'set-rate-limits':
      await clients.setClientSetting(username, 'rateLimits', { perIpPerMinute: Number(values['per-ip']), perKeyPerMinute: Number(values['per-key']) });
      return print({ username, rate_limits: { per_ip_per_minute: Number(values['per-ip']), per_key_per_minute: Number(values['per-key']) } });
    case 'set-signed-ids': {
      if (values.on === values.off) throw new Error('set-signed-ids needs --on or --off');
      const set = await clients.setSignedIds(username, values.on ?? false, values.rotate ?? false);
      return print({ username, signed_ids: set.signedIds, signing_secret: set.signingSecret ?? null });
    }
    case 'set-feed': {
      if (values.off === Boolean(rest[0])) throw new Error('set-feed needs a URL or --off');
      const { setFeed } = await import('../shared/recos/feeds.js');
      const feed = await setFeed(username, values.off ? undefined : rest[0]);
      return print({ username, feed: feed ?? null });
    }
    case 'link-secret': {
      const secrets = await import('../shared/readers/link-secret.js');
      const grace = values['grace-days'] === undefined ? secrets.DEFAULT_GRACE_DAYS : Number(values['grace-days']);
      if (!Number.isInteger(grace) || grace < 0 || grace > 3650) throw new Error('--grace-days must be a whole number of days from 0 to 3650');
      const s = values.rotate ? await secrets.rotateLinkSecret(username, grace) : await secrets.linkSecretsOf(username);
      if (!s) throw new Error(`unknown client ${username}`);
      return print({
        username,
        link_secret: s.current,
        previous_link_secret: s.previous ?? null,
        previous_valid_until: s.previousUntil === undefined ? null : new Date(s.previousUntil).toISOString(),
      });
    }
    case 'recount': {
      const { resetCounters } = await import('../shared/subscribers/recount.js');
      const ids = values.lists ? values.lists.split(',').map(Number) : (await lists.listLists(username)).map((l) => l.id);
      const counts: Record<number, unknown> = {};
      for (const id of ids) counts[id] = await resetCounters(username, id);
      return print(counts);
    }
    case 'backfill-global-forms':
      return print({ username, global_form_lists: await clients.backfillGlobalFormLists(username) });
    case 'set-branding': {
      const { set, remove } = await brandingArgs(values);
      const branding = await clients.setBranding(username, set, remove);
      return print({ username, branding });
    }
    case 'show-client': {
      const { apiKeyHash: _hidden, ...client } = await clients.requireClient(username);
      return print({ ...client, ...(client.globalFormLists ? { globalFormLists: [...client.globalFormLists].sort((a, b) => a - b) } : {}) });
    }
    default:
      console.error(`Unknown command ${command}\n\n${usage}`);
      process.exit(2);
  }
}

main(process.argv.slice(2)).catch((err) => {
  console.error(`admin: ${err instanceof Error ? err.message : err}`);
  process.exit(1);
});
