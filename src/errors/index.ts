/** Adjunct's typed error taxonomy. */
export * from './adjunct-error';
export * from './classify';
export * from './retry';
export * from './public-error';
