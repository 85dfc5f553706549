// Writes tests/fixtures/vercel-ai.json with the real AI SDK (npm `ai`, the npm-ai env).
//
// The assistant messages are built by the SDK itself: UI message stream chunks (what
// `streamText(...).toUIMessageStream()` sends to `useChat`) are fed to `readUIMessageStream`,
// which assembles the UIMessage (step-start parts, tool parts and their states, metadata).
// The system and user messages are written by hand in the shape `useChat`'s `sendMessage`
// gives them (UIMessages are only created client-side there). The whole list is then checked
// with `validateUIMessages` and `convertToModelMessages` before it is written.
//
// It covers: a system message; a user message with text, an image as a data URL and a PDF by
// URL, with metadata; a two-step assistant turn with reasoning, text, parallel calls of one
// tool (one output-available, one output-error), then a dynamic tool, a source-url, a
// source-document and a data-weather part, then a final text and a generated file, with
// message metadata; and a last assistant turn whose call is still pending (input-available).
//
//     node tests/conformance/make_vercel_ai.mjs
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ai, REPO } from './_npm_ai.mjs';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

async function assistant(chunks) {
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last;
  for await (const message of ai.readUIMessageStream({ stream, terminateOnError: true })) last = message;
  return JSON.parse(JSON.stringify(last)); // as JSON holds it (no undefined keys)
}

const text = (id, value) => [
  { type: 'text-start', id }, { type: 'text-delta', id, delta: value }, { type: 'text-end', id },
];

const turn = await assistant([
  { type: 'start', messageId: 'msg_a1', messageMetadata: { model: 'gpt-5-mini', createdAt: 1767225600000 } },
  { type: 'start-step' },
  { type: 'reasoning-start', id: 'r1' },
  { type: 'reasoning-delta', id: 'r1', delta: 'The user wants the weather in two cities; I can ask for both at once.' },
  { type: 'reasoning-end', id: 'r1' },
  ...text('t1', 'Let me check both cities.'),
  { type: 'tool-input-available', toolCallId: 'call_weather_1', toolName: 'get_weather',
    input: { city: 'Kyoto', unit: 'celsius' } },
  { type: 'tool-input-available', toolCallId: 'call_weather_2', toolName: 'get_weather',
    input: { city: 'Atlantis', unit: 'celsius' } },
  { type: 'tool-output-available', toolCallId: 'call_weather_1', output: { condition: 'rain', tempC: 11 } },
  { type: 'tool-output-error', toolCallId: 'call_weather_2', errorText: 'unknown city: Atlantis' },
  { type: 'finish-step' },
  { type: 'start-step' },
  { type: 'tool-input-available', toolCallId: 'call_museum_1', toolName: 'lookup_museum', dynamic: true,
    input: { city: 'Kyoto' } },
  { type: 'tool-output-available', toolCallId: 'call_museum_1', dynamic: true, output: 'Kyoto National Museum: open 9-17' },
  { type: 'source-url', sourceId: 'src_1', url: 'https://www.kyohaku.go.jp/eng/', title: 'Kyoto National Museum' },
  { type: 'source-document', sourceId: 'src_2', mediaType: 'application/pdf', title: 'Kyoto guide',
    filename: 'kyoto-guide.pdf' },
  { type: 'data-weather', id: 'weather_kyoto', data: { city: 'Kyoto', condition: 'rain', tempC: 11 } },
  { type: 'finish-step' },
  { type: 'start-step' },
  ...text('t2', 'Kyoto: rain, 11°C; the museum is open 9-17. I do not know Atlantis.'),
  { type: 'file', url: `data:image/png;base64,${PNG}`, mediaType: 'image/png' },
  { type: 'finish-step' },
  { type: 'finish', finishReason: 'stop', messageMetadata: { totalTokens: 412 } },
]);

const pending = await assistant([
  { type: 'start', messageId: 'msg_a2' },
  { type: 'start-step' },
  ...text('t3', 'Booking a table for two.'),
  { type: 'tool-input-available', toolCallId: 'call_book_1', toolName: 'book_table',
    input: { restaurant: 'Gion Karyo', people: 2, time: '19:30' } },
]);

const messages = [
  { id: 'msg_s1', role: 'system', parts: [{ type: 'text', text: 'You are a travel assistant.' }] },
  { id: 'msg_u1', role: 'user', metadata: { createdAt: 1767225590000 }, parts: [
    { type: 'text', text: 'Weather in Kyoto and Atlantis? Here is my photo and the guide.' },
    { type: 'file', mediaType: 'image/png', filename: 'me.png', url: `data:image/png;base64,${PNG}` },
    { type: 'file', mediaType: 'application/pdf', filename: 'kyoto-guide.pdf',
      url: 'https://example.com/files/kyoto-guide.pdf' },
  ] },
  turn,
  { id: 'msg_u2', role: 'user', parts: [{ type: 'text', text: 'Book Gion Karyo for two at 19:30.' }] },
  pending,
];

const valid = await ai.validateUIMessages({ messages });
if (!ai.isDeepEqualData(valid, messages)) throw new Error('validateUIMessages changed the messages');
await ai.convertToModelMessages(messages);
writeFileSync(join(REPO, 'tests', 'fixtures', 'vercel-ai.json'), JSON.stringify(messages, null, 2) + '\n');
console.log(`wrote ${messages.length} UIMessages`);
