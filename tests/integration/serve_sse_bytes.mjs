// The npm `eventsource-parser` (3.x) fed an SSE body one byte at a time
// (each byte through a streaming UTF-8 decoder): prints one line per
// event, "ID TYPE SEQ", and a last line "retry R" when the body set it.
// usage: node serve_sse_bytes.mjs FILE (SERVE_NPM: build/npm)
import fs from 'node:fs';
const { createParser } = await import(process.env.SERVE_NPM + '/node_modules/eventsource-parser/dist/index.js');
const bytes = fs.readFileSync(process.argv[2]);
const lines = [];
let retry = null;
const parser = createParser({
  onEvent: (ev) => { const e = JSON.parse(ev.data); lines.push(`${ev.id ?? '-'} ${e.type} ${e.data.seq}`); },
  onRetry: (r) => { retry = r; },
});
const dec = new TextDecoder('utf-8');
for (let i = 0; i < bytes.length; i++)
  parser.feed(dec.decode(bytes.subarray(i, i + 1), { stream: true }));
parser.feed(dec.decode());
for (const l of lines) console.log(l);
if (retry !== null) console.log('retry ' + retry);
