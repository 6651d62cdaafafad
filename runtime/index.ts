/**
 * The svcgen runtime: what every generated service links against.
 */
export { z } from './zod';
export * from './errors';
export * from './settings';
export * from './db';
export * from './convert';
export * from './fields';
export * from './validation';
export * from './query-params';
export * from './pagination';
export * from './list';
export * from './filters';
export * from './relations';
export * from './operations';
export * from './routes';
export * from './openapi';
export * from './body';
export * from './outage';
export * from './app';
export * from './server';
export * from './tokens';
export * from './auth';
export * from './context';
export * from './password';
export * from './throttle';
export * from './migrations';
export type { Knex } from 'knex';
export * from './m2m';
export * from './computed';
export * from './permissions';
export * from './rate-limit';
export * from './catalogue';
