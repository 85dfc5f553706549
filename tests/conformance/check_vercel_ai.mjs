// Conformance checker for the `vercel-ai` format; runs under `node` with the npm-ai env (the AI
// SDK, npm `ai`, pinned in tests/conformance/pins/npm-ai/package-lock.json).
//
// Reads {case_id: exported_value} (JSON) on stdin and writes {case_id: [error, ...]} on stdout;
// an empty list means the value is a UIMessage[] (or {messages: UIMessage[], ...}) that:
//
// - `safeValidateUIMessages` accepts, and gives back unchanged (its zod schemas drop unknown
//   keys silently: a dropped or changed key is an error here);
// - has consistent tool parts: every tool part has a toolCallId, an output-available one an
//   `output`, an output-error one an `errorText`, a dynamic-tool one a `toolName`;
// - gives each message an id of its own (useChat keys messages by id);
// - `convertToModelMessages` turns into model messages (what is sent to a model).
//
// Exit status 0 unless the checker itself crashes.
import { ai } from './_npm_ai.mjs';

const MAX_ERRORS = 20;
const NEEDS = { 'output-available': 'output', 'output-error': 'errorText' };

function difference(given, kept, path = '') {
  if (Array.isArray(given) !== Array.isArray(kept) || typeof given !== typeof kept || (given === null) !== (kept === null)) {
    return path || '(the value)';
  }
  if (given !== null && typeof given === 'object') {
    for (const key of new Set([...Object.keys(given), ...Object.keys(kept)])) {
      if (!(key in kept)) return `${path}.${key} (dropped by the schema: no such field)`;
      if (!(key in given)) return `${path}.${key} (added by the schema)`;
      const found = difference(given[key], kept[key], `${path}.${key}`);
      if (found) return found;
    }
    return null;
  }
  return Object.is(given, kept) ? null : path;
}

function toolErrors(messages) {
  const errors = [];
  messages.forEach((message, m) => (message?.parts ?? []).forEach((part, p) => {
    const where = `messages.${m}.parts.${p}`;
    if (typeof part?.type !== 'string' || !(part.type.startsWith('tool-') || part.type === 'dynamic-tool')) return;
    if (typeof part.toolCallId !== 'string') errors.push(`${where}: a tool part without toolCallId`);
    const key = NEEDS[part.state];
    if (key && !(key in part)) errors.push(`${where}: state ${part.state} without ${key}`);
    if (part.state === 'output-error' && typeof part.errorText !== 'string') errors.push(`${where}: errorText is not a string`);
    if (part.type === 'dynamic-tool' && typeof part.toolName !== 'string') errors.push(`${where}: dynamic-tool without toolName`);
  }));
  return errors;
}

function issues(error) {
  const cause = error?.cause;
  if (Array.isArray(cause?.issues)) return cause.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  return [String(error?.message ?? error).split('\n').slice(0, 6).join(' ')];
}

async function check(value) {
  const messages = Array.isArray(value) ? value : value?.messages;
  if (!Array.isArray(messages)) return [`expected a UIMessage[] (or {messages: [...]}), got ${typeof value}`];
  const errors = [...toolErrors(messages)];
  const result = await ai.safeValidateUIMessages({ messages: structuredClone(messages) });
  if (!result.success) {
    errors.push(...issues(result.error).map((e) => `validateUIMessages: ${e}`));
  } else {
    const changed = difference(messages, result.data);
    if (changed) errors.push(`validateUIMessages does not give the value back: messages${changed}`);
  }
  const seen = new Set();
  messages.forEach((message, m) => {
    if (seen.has(message?.id)) errors.push(`messages.${m}: id ${JSON.stringify(message.id)} is taken by an earlier message`);
    seen.add(message?.id);
  });
  if (result.success) {
    try {
      await ai.convertToModelMessages(structuredClone(messages));
    } catch (error) {
      errors.push(`convertToModelMessages: ${String(error?.message ?? error).split('\n')[0]}`);
    }
  }
  return errors.length > MAX_ERRORS ? [...errors.slice(0, MAX_ERRORS), `... and ${errors.length - MAX_ERRORS} more`] : errors;
}

let input = '';
for await (const chunk of process.stdin) input += chunk;
const out = {};
for (const [caseId, value] of Object.entries(JSON.parse(input))) out[caseId] = await check(value);
process.stdout.write(JSON.stringify(out));
