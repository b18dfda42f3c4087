import { describe, expect, it } from 'vitest';
import { collect, fieldForParam, findProvider, parseMap, summaryLine, type CatalogProvider } from '../../src/lib/provider-form';
import { renderProviderForm } from '../../src/views/provider-form';

// Schemas shaped like GET /api/providers/catalog rows (names made up: the
// form knows no provider, only schemas).
const mapped: CatalogProvider = {
  id: 'mapped-cloud', name: 'Mapped Cloud', category: 'apikey', userDefined: true, aliases: ['mc'],
  keyField: { kind: 'secret', label: 'API key', doc: 'Stored.', required: true },
  dataFields: [
    { name: 'apiVersion', type: 'string', required: false, secret: false, doc: 'api-version', label: 'API version', kind: 'text', default: '2024-10-21' },
    { name: 'deployments', type: 'object', required: false, secret: false, doc: 'model → deployment', label: 'Deployments', kind: 'map', mapKey: 'model', mapValue: 'deployment' },
    { name: 'api', type: 'string', required: false, secret: false, doc: 'wire', label: 'API', kind: 'select', options: ['chat', 'responses'], default: 'chat' },
  ],
};
const signed: CatalogProvider = {
  id: 'signed-cloud', name: 'Signed Cloud', category: 'apikey',
  keyField: { kind: 'none', label: 'API key', doc: '', required: false },
  dataFields: [
    { name: 'region', type: 'string', required: true, secret: false, doc: 'region', label: 'Region', kind: 'text', requiredUnless: 'profile', summary: 'region' },
    { name: 'keyId', type: 'string', required: true, secret: false, doc: 'key id', label: 'Key ID', kind: 'text', requiredUnless: 'profile' },
    { name: 'secret', type: 'string', required: true, secret: true, sealedAs: 'apiKey', doc: 'secret', label: 'Secret', kind: 'secret', requiredUnless: 'profile' },
    { name: 'token', type: 'string', required: false, secret: true, doc: 'token', label: 'Token', kind: 'secret' },
    { name: 'profile', type: 'string', required: false, secret: false, doc: 'profile', label: 'Profile', kind: 'text' },
  ],
};
const filed: CatalogProvider = {
  id: 'filed-cloud', name: 'Filed Cloud', category: 'apikey',
  keyField: { kind: 'file', label: 'Key file (JSON)', doc: 'the key file', accept: '.json', required: true },
  dataFields: [
    { name: 'project', type: 'string', required: false, secret: false, doc: 'project', label: 'Project', kind: 'text', summary: 'project' },
    { name: 'account', type: 'string', required: false, secret: false, doc: 'the gateway’s own', label: 'Account', readOnly: true, summary: 'service account' },
  ],
};

describe('collect', () => {
  it('adds: the key, set fields only, a map and a select', () => {
    const out = collect(mapped, 'add', { key: ' k1 ', values: { apiVersion: '', deployments: 'gpt-4o = dep-a\n\nmini: dep-b', api: 'responses' } });
    expect(out).toEqual({ errors: [], apiKey: 'k1', providerSpecificData: { deployments: { 'gpt-4o': 'dep-a', mini: 'dep-b' }, api: 'responses' } });
  });
  it('says which field is wrong', () => {
    expect(collect(mapped, 'add', { key: '', values: { deployments: 'gpt-4o' } }).errors).toEqual([
      { field: 'apiKey', message: 'Enter the API key.' },
      { field: 'deployments', message: 'Line 1: write model = deployment.' },
    ]);
    expect(collect(mapped, 'add', { key: 'k', values: { api: 'other' } }).errors).toEqual([{ field: 'api', message: 'Choose one of chat, responses.' }]);
  });
  it('required fields, unless their alternative is set; no key field when the data carry it', () => {
    expect(collect(signed, 'add', { key: '', values: {} }).errors.map((e) => e.field)).toEqual(['region', 'keyId', 'secret']);
    expect(collect(signed, 'add', { key: '', values: { profile: 'default' } })).toEqual({ errors: [], providerSpecificData: { profile: 'default' } });
    expect(collect(signed, 'add', { key: '', values: { region: 'us-east-1', keyId: 'AKIA', secret: 's' } })).toEqual({
      errors: [],
      providerSpecificData: { region: 'us-east-1', keyId: 'AKIA', secret: 's' },
    });
  });
  it('edits: a secret left empty is kept (not sent), the object goes only when it changed', () => {
    const base = { region: 'us-east-1', keyId: 'AKIA', other: 1 };
    expect(collect(signed, 'edit', { key: '', values: { region: 'us-east-1', keyId: 'AKIA', secret: '', token: '', profile: '' } }, base)).toEqual({ errors: [] });
    expect(collect(signed, 'edit', { key: '', values: { region: 'eu-west-1', keyId: 'AKIA', secret: 'new', token: '', profile: '' } }, base)).toEqual({
      errors: [],
      providerSpecificData: { region: 'eu-west-1', keyId: 'AKIA', secret: 'new', other: 1 },
    });
  });
  it('a file key must be the file’s JSON', () => {
    expect(collect(filed, 'add', { key: '', values: {} }).errors).toEqual([{ field: 'apiKey', message: 'Choose the Key file (JSON) file.' }]);
    expect(collect(filed, 'add', { key: '{', values: {} }).errors[0]?.field).toBe('apiKey');
    expect(collect(filed, 'add', { key: '{"a":1}', values: { project: 'p' } })).toEqual({ errors: [], apiKey: '{"a":1}', providerSpecificData: { project: 'p' } });
  });
});

describe('fieldForParam', () => {
  it('maps the API’s param to the field it names', () => {
    expect(fieldForParam(mapped, 'providerSpecificData.deployments')).toBe('deployments');
    expect(fieldForParam(mapped, 'apiKey')).toBe('apiKey');
    expect(fieldForParam(signed, 'apiKey')).toBe('secret');
    expect(fieldForParam(signed, 'providerSpecificData')).toBe('region');
    expect(fieldForParam(signed, 'providerSpecificData.profile')).toBe('profile');
    expect(fieldForParam(filed, 'providerSpecificData.account')).toBeUndefined();
    expect(fieldForParam(mapped, 'name')).toBeUndefined();
  });
});

describe('parseMap and findProvider', () => {
  it('reads lines and refuses doubles', () => {
    expect(parseMap('a=b\n c : d e ', mapped.dataFields![1]!)).toEqual({ value: { a: 'b', c: 'd e' } });
    expect(parseMap('a=b\na=c', mapped.dataFields![1]!)).toEqual({ error: 'Line 2: “a” is listed twice.' });
  });
  it('finds a row by id or alias', () => {
    expect(findProvider([mapped, signed], ' MC ')?.id).toBe('mapped-cloud');
    expect(findProvider([mapped], 'nope')).toBeUndefined();
  });
});

describe('summaryLine', () => {
  it('an OAuth login’s account, then the schema’s summary fields', () => {
    expect(summaryLine({ authType: 'oauth', providerSpecificData: { email: 'a@b', project: 'p-1' } }, filed)).toBe('account a@b · project p-1');
    expect(summaryLine({ authType: 'apikey', providerSpecificData: { project: 'p', account: 'sa@p' } }, filed)).toBe('project p · service account sa@p');
    expect(summaryLine({ authType: 'apikey', providerSpecificData: { email: 'x' } }, undefined)).toBeNull();
  });
});

describe('renderProviderForm', () => {
  it('renders each field as its kind asks, never echoing a secret', () => {
    const c = { id: 'c1', provider: 'signed-cloud', name: 's', isActive: true, apiKeyMasked: 'ab…yz', providerSpecificData: { region: 'us-east-1', keyId: 'AKIA' } };
    const f = renderProviderForm(signed, { mode: 'edit', idPrefix: 't', connection: c });
    const el = f.element!;
    expect(el.querySelector('legend')?.textContent).toBe('Signed Cloud');
    expect(el.querySelector<HTMLInputElement>('#t-apikey')).toBeNull(); // the data carry the key
    expect(el.querySelector<HTMLInputElement>('#t-psd-region')?.value).toBe('us-east-1');
    const secret = el.querySelector<HTMLInputElement>('#t-psd-secret')!;
    expect([secret.type, secret.value, secret.placeholder]).toEqual(['password', '', 'stored — replace']);
    expect(f.controlForParam('apiKey')).toBe(secret);
  });
  it('a select offers its options and its default; a map is one pair a line', () => {
    const c = { id: 'c2', provider: 'mapped-cloud', name: 'm', isActive: true, providerSpecificData: { deployments: { b: 'd2', a: 'd1' }, api: 'responses' } };
    const el = renderProviderForm(mapped, { mode: 'edit', idPrefix: 'u', connection: c }).element!;
    const sel = el.querySelector<HTMLSelectElement>('#u-psd-api')!;
    expect([...sel.options].map((o) => o.textContent)).toEqual(['default (chat)', 'chat', 'responses']);
    expect(sel.value).toBe('responses');
    expect(el.querySelector<HTMLTextAreaElement>('#u-psd-deployments')?.value).toBe('a = d1\nb = d2');
    expect(el.querySelector('label[for="u-apikey"]')?.textContent).toBe('New API key');
  });
  it('a file key and the gateway’s own fields (shown on edit only, read-only)', () => {
    const add = renderProviderForm(filed, { mode: 'add', idPrefix: 'v' }).element!;
    expect(add.querySelector<HTMLInputElement>('#v-apikey')?.type).toBe('file');
    expect(add.querySelector('#v-psd-account')).toBeNull();
    const edit = renderProviderForm(filed, { mode: 'edit', idPrefix: 'w', connection: { id: 'x', provider: 'filed-cloud', name: 'f', isActive: true, providerSpecificData: { account: 'sa@p' } } }).element!;
    expect(edit.querySelector<HTMLInputElement>('#w-psd-account')?.readOnly).toBe(true);
  });
  it('shows an error under the field it names', async () => {
    const f = renderProviderForm(mapped, { mode: 'add', idPrefix: 'e' });
    document.body.append(f.element!);
    f.control('deployments')!.value = 'no pair here';
    const out = await f.value();
    const first = f.showErrors(out.errors);
    expect(first?.id).toBe('e-apikey');
    expect(document.getElementById('e-psd-deployments-error')?.textContent).toBe('Line 1: write model = deployment.');
    f.element!.remove();
  });
});
