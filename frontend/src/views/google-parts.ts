/**
 * The Connections page's Google Cloud parts: a Vertex AI connection is made
 * from a service account's JSON key (uploaded, never shown again) with its
 * project and region; a Gemini CLI login may name the Google Cloud project
 * Code Assist bills (else the one Code Assist finds for the account). A row
 * shows the account each of these connections acts as.
 */
import type { Connection } from '../api';
import { field, h } from '../dom';
import { accountLine, readServiceAccount } from '../lib/google';

/** Fields of the add form for a vertex connection (hidden for other providers). */
export function vertexAddFields(): {
  element: HTMLElement;
  controls: Record<string, HTMLInputElement>;
  sync: (provider: string) => boolean;
  value: () => Promise<{ apiKey: string; providerSpecificData: Record<string, unknown> } | { error: string; control: HTMLInputElement }>;
  reset: () => void;
} {
  const key = h('input', { id: 'conn-sakey', name: 'serviceAccountKey', type: 'file', accept: 'application/json,.json' });
  const project = h('input', { id: 'conn-gcp-project', name: 'projectId', autocomplete: 'off', spellcheck: 'false', placeholder: 'from the key' });
  const region = h('input', { id: 'conn-gcp-region', name: 'region', autocomplete: 'off', spellcheck: 'false', placeholder: 'us-central1' });
  const element = h(
    'fieldset',
    { class: 'form-grid', 'data-testid': 'vertex-fields', hidden: true },
    h('legend', null, 'Vertex AI service account'),
    field('Service-account key (JSON)', key, 'The key file from IAM → Service accounts → Keys. Stored encrypted; never shown again.'),
    field('Project', project, 'Optional; defaults to the key’s project_id.'),
    field('Region', region, 'Optional; us-central1 when empty (europe-west4, global, …).'),
  );
  return {
    element,
    controls: { apiKey: key, 'providerSpecificData.projectId': project, 'providerSpecificData.region': region },
    sync: (provider) => {
      const on = provider === 'vertex' || provider === 'vertex-ai' || provider === 'gcp-vertex';
      element.hidden = !on;
      key.required = on;
      return on;
    },
    value: async () => {
      const file = key.files?.[0];
      if (!file) return { error: 'Choose the service account’s JSON key file.', control: key };
      const text = await file.text();
      const sa = readServiceAccount(text);
      if ('error' in sa) return { error: sa.error, control: key };
      const data: Record<string, unknown> = {};
      if (project.value.trim()) data['projectId'] = project.value.trim();
      if (region.value.trim()) data['region'] = region.value.trim();
      return { apiKey: text, providerSpecificData: data };
    },
    reset: () => {
      key.value = '';
      project.value = '';
      region.value = '';
    },
  };
}

/** The account line of a row: whose login or service account the connection acts as. */
export function accountSummary(c: Connection): HTMLElement | null {
  const line = accountLine(c);
  return line ? h('small', { class: 'block muted truncate', 'data-testid': 'account', title: line }, line) : null;
}

/**
 * The edit dialog's Google fields: for vertex a new key, project and region;
 * for a Gemini CLI login its optional project. value() is the change to
 * send (null: none), or the field at fault.
 */
export function googleEditFields(c: Connection): {
  element: HTMLElement;
  /** The fields by the API's error param, to mark the one an error names. */
  controls: Record<string, HTMLInputElement>;
  value: () => Promise<{ apiKey?: string; providerSpecificData?: Record<string, unknown> } | null | { error: string; control: HTMLInputElement }>;
} | null {
  const data = (c.providerSpecificData ?? {}) as Record<string, unknown>;
  const str = (k: string) => (typeof data[k] === 'string' ? (data[k] as string) : '');
  const project = h('input', { id: 'edit-gcp-project', name: 'projectId', autocomplete: 'off', spellcheck: 'false' });
  project.value = str('projectId');
  if (c.provider === 'gemini-cli') {
    const element = h(
      'fieldset',
      { class: 'form-grid form-grid-2' },
      h('legend', null, 'Code Assist'),
      field('Google Cloud project', project, 'Optional: the project the Gemini CLI uses (GOOGLE_CLOUD_PROJECT); empty lets Code Assist find the account’s own.'),
    );
    return {
      element,
      controls: { 'providerSpecificData.projectId': project },
      value: async () => (project.value.trim() === str('projectId') ? null : { providerSpecificData: { ...data, projectId: project.value.trim() } }),
    };
  }
  if (c.provider !== 'vertex') return null;
  const key = h('input', { id: 'edit-sakey', name: 'serviceAccountKey', type: 'file', accept: 'application/json,.json' });
  const region = h('input', { id: 'edit-gcp-region', name: 'region', autocomplete: 'off', spellcheck: 'false' });
  region.value = str('region');
  const element = h(
    'fieldset',
    { class: 'form-grid form-grid-2' },
    h('legend', null, 'Vertex AI service account'),
    field('New key (JSON)', key, `Leave empty to keep the current key${str('clientEmail') ? ` (${str('clientEmail')})` : ''}.`),
    field('Project', project, 'The Google Cloud project the models are called in.'),
    field('Region', region, 'us-central1, europe-west4, global, …'),
  );
  return {
    element,
    controls: { apiKey: key, 'providerSpecificData.projectId': project, 'providerSpecificData.region': region },
    value: async () => {
      const out: { apiKey?: string; providerSpecificData?: Record<string, unknown> } = {};
      const file = key.files?.[0];
      if (file) {
        const text = await file.text();
        const sa = readServiceAccount(text);
        if ('error' in sa) return { error: sa.error, control: key };
        out.apiKey = text;
      }
      if (project.value.trim() !== str('projectId') || region.value.trim() !== str('region')) {
        out.providerSpecificData = { ...data, projectId: project.value.trim(), region: region.value.trim() };
      }
      return Object.keys(out).length ? out : null;
    },
  };
}
