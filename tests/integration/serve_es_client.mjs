// The npm `eventsource` package (3.x, WHATWG EventSource for Node) reading
// GET .../events of madf serve with a bearer token (through its fetch
// option). Every event's type and id go to PROGRESS as they come; when the
// source closes for good (madf answers 204 once the client has every
// event), OUT gets {opens, seen: [{id, seq, type}], closedBy}.
// usage: node serve_es_client.mjs URL TOKEN PROGRESS OUT (SERVE_NPM: build/npm)
import fs from 'node:fs';
const [url, token, progress, out] = process.argv.slice(2);
const { EventSource } = await import(process.env.SERVE_NPM + '/node_modules/eventsource/dist/index.js');
const seen = [];
let opens = 0;
const es = new EventSource(url, {
  fetch: (u, init) => fetch(u, { ...init, headers: { ...init.headers, Authorization: 'Bearer ' + token } }),
});
es.onopen = () => { opens++; };
es.onmessage = (m) => {
  const e = JSON.parse(m.data);
  seen.push({ id: m.lastEventId, seq: e.data.seq, type: e.type });
  fs.appendFileSync(progress, e.type + ' ' + m.lastEventId + '\n');
};
es.onerror = (err) => {
  if (es.readyState === es.CLOSED) {
    fs.writeFileSync(out, JSON.stringify({ opens, seen, closedBy: err.code ?? null }));
    process.exit(0);
  }
};
// Not an assertion: a stuck test ends with what it has.
setTimeout(() => { fs.writeFileSync(out, JSON.stringify({ opens, seen, closedBy: 'timeout' })); process.exit(1); }, 120000);
