// Writes package.json's `contributes.configuration` from the server's settings model
// (server/greenloop/settings.py), so `greenloop.*` mirrors it. `--check` only compares.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Server fields the editor does not offer, and why. */
export const NOT_MIRRORED = {
  'llm.api_key': 'a secret: "Greenloop: Set API Key" keeps it in SecretStorage',
  'llm.prices': 'a table keyed by model name: set it in greenloop.toml',
};

/** Client-side settings (the server ignores `server.*`; `runTestsOnSave` is read by the LSP front end). */
const CLIENT_SETTINGS = {
  'greenloop.server.path': {
    type: 'string',
    default: '',
    scope: 'machine-overridable',
    description:
      'Path to the `greenloop` executable, or to a Python interpreter that has greenloop installed. ' +
      'Empty: the active Python environment, then `greenloop` or `python3 -m greenloop` on PATH.',
  },
  'greenloop.trace.server': {
    type: 'string',
    enum: ['off', 'messages', 'verbose'],
    default: 'off',
    description: 'Log the messages between VS Code and the greenloop server to the Greenloop output.',
  },
  'greenloop.runTestsOnSave': {
    type: 'boolean',
    default: false,
    description: 'Run the tests when a file is saved, and show failing tests as diagnostics.',
  },
};

const DESCRIPTION_SUFFIX = {
  'llm.base_url': ' The API key is set with "Greenloop: Set API Key".',
};

const camel = (name) => name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

export function readServerSchema(python = process.env.PYTHON || 'python3') {
  const out = execFileSync(python, [join(root, 'scripts', 'settings-schema.py')], { encoding: 'utf8' });
  return JSON.parse(out);
}

function vscodeProperty(key, schema) {
  let { type, enum: values } = schema;
  let nullable = false;
  if (schema.anyOf) {
    const kinds = schema.anyOf.filter((s) => s.type !== 'null');
    nullable = kinds.length < schema.anyOf.length;
    type = kinds[0]?.type;
    values = kinds[0]?.enum;
  }
  let def = schema.default;
  if (def === null || def === undefined) {
    def = type === 'string' ? '' : null;
  }
  const prop = { type: nullable && def === null ? [type, 'null'] : type, default: def };
  if (values) prop.enum = values;
  for (const bound of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) {
    if (schema[bound] !== undefined) prop[bound] = schema[bound];
  }
  const unset = nullable && type === 'string' && !/Unset/.test(schema.description ?? '') ? ' Empty: unset.' : '';
  prop.description = `${schema.description ?? ''}${DESCRIPTION_SUFFIX[key] ?? ''}${unset}`.trim();
  if (schema.renamed_to) {
    const [section] = key.split('.');
    prop.deprecationMessage = `Renamed: greenloop.${camel(section)}.${camel(schema.renamed_to)} (this old name is still read).`;
  }
  return prop;
}

/** `greenloop.*` properties: the client's own, then one per mirrored server field. */
export function configurationProperties(serverSchema) {
  const properties = { ...CLIENT_SETTINGS };
  for (const [section, fields] of Object.entries(serverSchema)) {
    for (const [field, schema] of Object.entries(fields)) {
      const key = `${section}.${field}`;
      if (key in NOT_MIRRORED) continue;
      properties[`greenloop.${camel(section)}.${camel(field)}`] = vscodeProperty(key, schema);
    }
  }
  return properties;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = join(root, 'package.json');
  const pkg = JSON.parse(readFileSync(file, 'utf8'));
  const wanted = configurationProperties(readServerSchema());
  const same = JSON.stringify(pkg.contributes.configuration.properties) === JSON.stringify(wanted);
  if (process.argv.includes('--check')) {
    if (!same) {
      console.error('package.json settings differ from server/greenloop/settings.py: run `npm run sync-settings`.');
      process.exit(1);
    }
  } else if (!same) {
    pkg.contributes.configuration.properties = wanted;
    writeFileSync(file, JSON.stringify(pkg, null, 2) + '\n');
    console.log(`package.json: ${Object.keys(wanted).length} greenloop.* settings written`);
  }
}
