/**
 * `node --import <this, built>`: a process in which the optional peer `elkjs` cannot be loaded, as
 * in a fresh install without it — every import of it fails to resolve, as a missing package's does.
 */
import { register } from 'node:module';

const hooks = `export async function resolve(specifier, context, next) {
  if (specifier === 'elkjs' || specifier.startsWith('elkjs/')) {
    const error = new Error("Cannot find package 'elkjs' imported from " + context.parentURL);
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`;

register(`data:text/javascript,${encodeURIComponent(hooks)}`);
