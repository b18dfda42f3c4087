import { describe, expect, it } from 'vitest';
import { duration, effectText, flagsText, matchText, parseRules, previewSentence, type ListedRule } from '../../src/lib/rules';

const restate: ListedRule = {
  kind: 'restatement', source: 'builtin', id: 'agentrouter-quota-as-403', provider: 'agentrouter', hits: 2,
  restatement: { id: 'agentrouter-quota-as-403', provider: 'agentrouter', fromStatuses: [400, 403], toStatus: 429,
    textMarkers: ['用户额度不足', '额度不足'], excludeMarkers: ['无权访问模型'], defaultRetryAfterMs: 60000 },
};
const modelRule: ListedRule = {
  kind: 'rule', source: 'builtin', id: 'agentrouter-model-access-denied', provider: 'agentrouter', hits: 0,
  rule: { id: 'agentrouter-model-access-denied', provider: 'agentrouter', match: { statuses: [403], textMarkers: ['无权访问模型'] },
    reason: 'model_access_denied', scope: 'model', cooldownMs: 21600000 },
};

describe('rules page', () => {
  it('describes what a rule matches and does', () => {
    expect(matchText(restate)).toBe('HTTP 400, 403 + text “用户额度不足” / “额度不足”, unless “无权访问模型”');
    expect(effectText(restate)).toBe('restated to 429, client told Retry-After 1 min');
    expect(effectText(modelRule)).toBe('model access denied → model scope for 6 h');
    expect(effectText({ ...modelRule, rule: { ...modelRule.rule!, reason: 'tool_count_limit' } })).toContain('routed around');
  });
  it('formats durations in the largest whole unit', () => {
    expect(duration(21600000)).toBe('6 h');
    expect(duration(90000)).toBe('90 s');
    expect(duration(1500)).toBe('1500 ms');
  });
  it('reads a preview answer as a sentence', () => {
    const s = previewSentence({ provider: 'agentrouter', upstreamStatus: 403, status: 429, kind: 'quota', code: 'UPSTREAM_QUOTA_EXHAUSTED',
      scope: 'connection', failover: true, leaves: 'connection', clientStatus: 429, clientRetryAfterSeconds: 60,
      restatement: 'agentrouter-quota-as-403', rule: 'agentrouter-user-quota-exhausted', ruleSource: 'builtin', scopeHonoured: true });
    expect(s).toContain('restated from 403 to 429');
    expect(s).toContain('the client gets 429 with Retry-After 60 s');
    expect(s).toContain('Leaves routing: connection.');
  });
  it('names the providers of each catalogue flag', () => {
    const s = flagsText([
      { provider: 'agentrouter', ruleFullText: true, honorsRuleScope: true, egressBucketed: false },
      { provider: 'opencode', ruleFullText: true, honorsRuleScope: false, egressBucketed: true },
    ]);
    expect(s).toContain('full error text for: agentrouter, opencode');
    expect(s).toContain('scope acts for: agentrouter (');
    expect(s).toContain('IP-bucketed (egress lock): opencode.');
  });
  it('parses the operator editor', () => {
    expect(parseRules('')).toEqual({ rules: [] });
    expect('error' in parseRules('{"id":"x"}')).toBe(true);
    expect('error' in parseRules('[oops')).toBe(true);
    expect(parseRules('[{"id":"a"}]')).toEqual({ rules: [{ id: 'a' }] });
  });
});
