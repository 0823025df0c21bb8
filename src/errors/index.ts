/** Adjunct's typed error taxonomy. */
export * from './error-codes';
export * from './error-stage';
export * from './adjunct-error';
export * from './classify';
export * from './retry';
export * from './public-error';
