/* Generated from askd's models by `make js-types` (askd schema, then json-schema-to-typescript). Do not edit. */
export {};
