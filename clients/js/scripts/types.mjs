// askd's JSON Schema (stdin, as `askd schema` prints it) to TypeScript (stdout).
// `npm run types` writes src/protocol.ts with it; askd's tests run it again
// and fail when the committed file differs.

import { text } from 'node:stream/consumers';
import { compile } from 'json-schema-to-typescript';

const schema = JSON.parse(await text(process.stdin));
const ts = await compile(schema, 'askd', {
  additionalProperties: false, // what askd sends has the fields its models name
  unreachableDefinitions: true, // every model, not only those the root names
  bannerComment: "/* Generated from askd's models by `make js-types` (askd schema, then json-schema-to-typescript). Do not edit. */",
});
process.stdout.write(ts);
